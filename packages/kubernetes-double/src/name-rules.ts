/*
 * apimachinery's util/validation checks, with their exact messages (each returns the list of
 * problems, empty when the value is fine). The double keeps its own copy of these rules on purpose:
 * it stands in for the API server, so it follows Kubernetes, never the product it tests.
 *
 * Sources:
 * - Kubernetes documentation, "Object Names and IDs":
 *   https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 * - apimachinery, pkg/util/validation/validation.go (the regexes and messages below):
 *   https://github.com/kubernetes/apimachinery/blob/master/pkg/util/validation/validation.go
 */

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

const whole = (fmt: string) => new RegExp(`^(?:${fmt})$`);
const QUALIFIED_NAME = whole(QUALIFIED_NAME_FMT);
const LABEL_VALUE = whole(LABEL_VALUE_FMT);
const DNS1123_LABEL = whole(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN = whole(DNS1123_SUBDOMAIN_FMT);
const CONFIG_MAP_KEY = whole(CONFIG_MAP_KEY_FMT);

const maxLenError = (length: number) => `must be no more than ${length} characters`;

function regexError(message: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${fmt}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isQualifiedName(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME.test(name))
    errors.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

export function isValidLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!LABEL_VALUE.test(value)) errors.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errors;
}

export function isDns1123Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!DNS1123_LABEL.test(value)) errors.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  return errors;
}

export function isDns1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN.test(value)) errors.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errors;
}

/** What a Secret's (or ConfigMap's) data keys must be: they become file names in volumes. */
export function isConfigMapKey(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLenError(253));
  if (!CONFIG_MAP_KEY.test(value)) errors.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (errors.length === 0) {
    if (value === '.') errors.push("must not be '.'");
    else if (value === '..') errors.push("must not be '..'");
    else if (value.startsWith('..')) errors.push("must not start with '..'");
  }
  return errors;
}
