import { badRequest } from './status-error.js';

export type FieldSelector = Array<{ field: string; op: '=' | '!='; value: string }>;

/**
 * Parses `metadata.name=x,metadata.namespace!=y` (also `==`); `supported` are the fields the kind
 * registers (metadata.name and metadata.namespace everywhere, a few kinds add their own).
 */
export function parseFieldSelector(text: string, supported: readonly string[]): FieldSelector {
  const selector: FieldSelector = [];
  if (text.trim() === '') return selector;
  for (const part of splitTerms(text)) {
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part.trim());
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const [, field, op, value] = match;
    if (!supported.includes(field!)) throw badRequest(`field label not supported: ${field}`);
    selector.push({ field: field!, op: op === '!=' ? '!=' : '=', value: unescape(value!) });
  }
  return selector;
}

export function matchesFields(selector: FieldSelector, fields: Record<string, string>): boolean {
  return selector.every(({ field, op, value }) => (op === '=' ? fields[field] === value : fields[field] !== value));
}

/** Terms are comma separated; a backslash escapes a comma, an equals sign or itself in a value. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
    } else if (c === ',') {
      terms.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  terms.push(current);
  return terms;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}
