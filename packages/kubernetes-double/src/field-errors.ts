/**
 * Validation errors as apimachinery's `field.Error` words them: `<field>: <body>`, where the body
 * is the type's text, the value (strings quoted as Go's %q does) and a detail.
 */
export type FieldErrorType = 'Required' | 'Invalid' | 'Forbidden' | 'TooLong' | 'Duplicate' | 'NotSupported';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /**
   * Shown for Invalid, Duplicate and NotSupported; undefined prints as null, as for a nil value.
   * `{ go }` is printed as is: Go's %#v of a struct or map, such as `map[string]string{"a":"b"}`.
   */
  value?: string | number | boolean | null | { go: string };
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Forbidden: 'Forbidden',
  TooLong: 'Too long',
  Duplicate: 'Duplicate value',
  NotSupported: 'Unsupported value',
};

/** The `reason` of a StatusCause (CauseType in Go). */
export function causeType(error: FieldError): string {
  return `FieldValue${error.type}`;
}

export function errorBody(error: FieldError): string {
  let text = TYPE_TEXT[error.type];
  if (error.type !== 'Required' && error.type !== 'Forbidden' && error.type !== 'TooLong') {
    const value = error.value ?? null;
    const shown =
      typeof value === 'string' ? JSON.stringify(value) : value !== null && typeof value === 'object' ? value.go : String(value);
    text += `: ${shown}`;
  }
  return error.detail ? `${text}: ${error.detail}` : text;
}

export function fieldErrorText(error: FieldError): string {
  return `${error.field}: ${errorBody(error)}`;
}

/** An ErrorList's aggregate text: one error alone, several in brackets, duplicates once. */
export function aggregateText(errors: readonly FieldError[]): string {
  const texts = [...new Set(errors.map(fieldErrorText))];
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}

export const required = (field: string, detail = ''): FieldError => ({ type: 'Required', field, detail });
export const invalid = (field: string, value: FieldError['value'], detail: string): FieldError => ({
  type: 'Invalid',
  field,
  value,
  detail,
});
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
export const tooLong = (field: string, max: number): FieldError => ({
  type: 'TooLong',
  field,
  detail: `may not be more than ${max} bytes`,
});
