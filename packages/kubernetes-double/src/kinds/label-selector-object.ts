import { isJsonObject, type JsonObject, type JsonValue, stringMapAt } from '../json.js';

interface Expression {
  key: string;
  operator: string;
  values: string[];
}

function expressions(selector: JsonObject): Expression[] {
  const list = selector.matchExpressions;
  if (!Array.isArray(list)) return [];
  return list.filter(isJsonObject).map((e) => ({
    key: typeof e.key === 'string' ? e.key : '',
    operator: typeof e.operator === 'string' ? e.operator : '',
    values: Array.isArray(e.values) ? e.values.filter((v): v is string => typeof v === 'string') : [],
  }));
}

/** Whether a metav1.LabelSelector (matchLabels and matchExpressions, ANDed) selects `labels`. */
export function selectorMatches(selector: JsonValue | undefined, labels: Record<string, string>): boolean {
  if (!isJsonObject(selector)) return false;
  for (const [key, value] of Object.entries(stringMapAt(selector, 'matchLabels'))) if (labels[key] !== value) return false;
  return expressions(selector).every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key]!);
      case 'NotIn':
        return !has || !values.includes(labels[key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
}

export function selectorIsEmpty(selector: JsonValue | undefined): boolean {
  return !isJsonObject(selector) || (Object.keys(stringMapAt(selector, 'matchLabels')).length === 0 && expressions(selector).length === 0);
}

/** labels.Selector's String(): requirements sorted by key, `a=b`, `c in (x,y)`, `!d`. */
export function selectorString(selector: JsonValue | undefined): string {
  if (!isJsonObject(selector)) return '';
  const parts: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(stringMapAt(selector, 'matchLabels'))) parts.push([key, `${key}=${value}`]);
  for (const { key, operator, values } of expressions(selector)) {
    const sorted = [...values].sort().join(',');
    if (operator === 'In') parts.push([key, `${key} in (${sorted})`]);
    else if (operator === 'NotIn') parts.push([key, `${key} notin (${sorted})`]);
    else if (operator === 'Exists') parts.push([key, key]);
    else if (operator === 'DoesNotExist') parts.push([key, `!${key}`]);
  }
  return parts
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** Go's %#v of a string map, as validation messages print template labels. */
export function goStringMap(map: Record<string, string>): string {
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(map[k])}`);
  return entries.length ? `map[string]string{${entries.join(', ')}}` : 'map[string]string(nil)';
}

/** Go's %#v of a *v1.LabelSelector, as validation messages print it. */
export function goLabelSelector(selector: JsonValue | undefined): string {
  if (!isJsonObject(selector)) return '(*v1.LabelSelector)(nil)';
  const list = expressions(selector);
  const matchExpressions = list.length
    ? `[]v1.LabelSelectorRequirement{${list
        .map(
          (e) =>
            `v1.LabelSelectorRequirement{Key:${JSON.stringify(e.key)}, Operator:${JSON.stringify(e.operator)}, Values:[]string{${e.values.map((v) => JSON.stringify(v)).join(', ')}}}`,
        )
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `&v1.LabelSelector{MatchLabels:${goStringMap(stringMapAt(selector, 'matchLabels'))}, MatchExpressions:${matchExpressions}}`;
}
