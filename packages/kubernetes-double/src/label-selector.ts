import { badRequest } from './status-error.js';

/** One requirement of a label selector, as apimachinery's labels package parses it. */
export type Requirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type LabelSelector = Requirement[];

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Parses `a=b,c!=d,e in (x,y),f notin (z),!g,h,i>3` (also `==`). An empty string selects everything.
 * A malformed selector is a 400, as the server answers when it cannot decode the list options.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const tokens = tokenize(text);
  const requirements: LabelSelector = [];
  let i = 0;
  const fail = (why: string): never => {
    throw badRequest(`unable to parse requirement: ${why}`);
  };
  const peek = () => tokens[i];
  while (i < tokens.length) {
    let negated = false;
    if (peek() === '!') {
      negated = true;
      i++;
    }
    const key = tokens[i++];
    if (key === undefined || isOperator(key)) fail(`found '${key ?? ''}', expected: identifier`);
    checkKey(key!);
    const op = peek();
    if (negated) {
      if (op !== undefined && op !== ',') fail(`found '${op}', expected: ',' or 'end of string'`);
      requirements.push({ key: key!, op: '!' });
    } else if (op === undefined || op === ',') {
      requirements.push({ key: key!, op: 'exists' });
    } else if (op === '=' || op === '==' || op === '!=') {
      i++;
      const next = peek();
      const value = next === undefined || next === ',' ? '' : tokens[i++]!;
      if (isOperator(value)) fail(`found '${value}', expected: identifier`);
      checkValue(value);
      requirements.push({ key: key!, op: op === '!=' ? '!=' : '=', value });
    } else if (op === 'in' || op === 'notin') {
      i++;
      if (tokens[i++] !== '(') fail(`found '${tokens[i - 1] ?? ''}', expected: '('`);
      const values: string[] = [];
      while (peek() !== ')') {
        const value = tokens[i];
        if (value === undefined) fail("found '', expected: ')'");
        if (value === ',') {
          i++;
          continue;
        }
        if (isOperator(value!)) fail(`found '${value}', expected: ',', ')' or identifier`);
        checkValue(value!);
        values.push(value!);
        i++;
      }
      i++;
      requirements.push({ key: key!, op, values });
    } else if (op === '>' || op === '<') {
      i++;
      const value = tokens[i++];
      if (value === undefined || !/^-?\d+$/.test(value)) fail(`for 'gt', 'lt' operators, exactly one value is required`);
      requirements.push({ key: key!, op: op === '>' ? 'gt' : 'lt', value: Number(value) });
    } else {
      fail(`found '${op}', expected: '=', '!=', '==', 'in', notin'`);
    }
    const separator = tokens[i];
    if (separator !== undefined) {
      if (separator !== ',') fail(`found '${separator}', expected: ',' or 'end of string'`);
      i++;
      if (i >= tokens.length) fail("found '', expected: identifier after ','");
    }
  }
  return requirements;
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string>): boolean {
  return selector.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
        return has && value === r.value;
      case '!=':
        return !has || value !== r.value;
      case 'in':
        return has && r.values.includes(value!);
      case 'notin':
        return !has || !r.values.includes(value!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        return r.op === 'gt' ? Number(value) > r.value : Number(value) < r.value;
      }
    }
  });
}

const OPERATORS = new Set(['!', '=', '==', '!=', '(', ')', ',', '>', '<']);
const isOperator = (token: string) => OPERATORS.has(token);

/** Words are runs of anything but whitespace and the operator characters; `in`/`notin` are words. */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '=' || c === '!') {
      if (text[i + 1] === '=') {
        tokens.push(`${c}=`);
        i += 2;
      } else {
        tokens.push(c);
        i++;
      }
    } else if ('(),<>'.includes(c)) {
      tokens.push(c);
      i++;
    } else {
      let j = i;
      while (j < text.length && !/[\s=!(),<>]/.test(text[j]!)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function checkKey(key: string): void {
  const name = key.includes('/') ? key.slice(key.lastIndexOf('/') + 1) : key;
  if (!QUALIFIED_NAME.test(key) || name.length > 63 || key.length - name.length - 1 > 253) {
    throw badRequest(
      `unable to parse requirement: invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.'`,
    );
  }
}

function checkValue(value: string): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw badRequest(
      `unable to parse requirement: values[0][${value}]: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'`,
    );
  }
}
