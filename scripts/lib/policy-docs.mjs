// The policy reference's field tables, written from the policy's JSON Schema (the one the build
// ships as dist/policy.schema.json, generated from the zod schemas `validate` checks with), so that
// docs/reference/policy.md cannot list a field, a default or an allowed value the code does not have.
// Pure: scripts/generate-policy-docs.mjs writes the page, and a unit test compares it.

export const REGION_START = '<!-- generated:policy-fields:start -->';
export const REGION_END = '<!-- generated:policy-fields:end -->';

/** A table cell: one line, with the pipe escaped. */
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (value) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;

/** What a value may be, in words: `raw` | `env`, text, list of text, a map of text... */
function typeOf(schema) {
  if (schema.const !== undefined) return code(schema.const);
  if (schema.enum) return schema.enum.map(code).join(' | ');
  if (schema.anyOf || schema.oneOf) {
    const branches = (schema.anyOf ?? schema.oneOf).map(typeOf);
    return [...new Set(branches)].join(' or ');
  }
  const types = [schema.type ?? 'any'].flat();
  return types
    .map((type) => {
      if (type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'any'}`;
      if (type === 'object') return schema.properties ? 'object' : 'map of text';
      if (type === 'string') return 'text';
      if (type === 'null') return '`null`';
      return type;
    })
    .join(' or ');
}

/** Bounds and patterns a value must meet, when the schema states them. */
function rulesOf(schema) {
  const rules = [];
  if (schema.minLength === 1) rules.push('not empty');
  else if (schema.minLength !== undefined) rules.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) rules.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined) rules.push(`at least ${schema.minItems} ${schema.minItems === 1 ? 'entry' : 'entries'}`);
  if (schema.maxItems !== undefined) rules.push(`at most ${schema.maxItems}`);
  if (schema.minimum !== undefined) rules.push(`from ${schema.minimum}`);
  if (schema.maximum !== undefined) rules.push(`to ${schema.maximum}`);
  if (schema.pattern !== undefined) rules.push(`matches ${code(schema.pattern)}`);
  return rules.join(', ');
}

function row(name, schema, required) {
  const notes = [schema.description, rulesOf(schema)].filter(Boolean).join(' ');
  const fallback = schema.default !== undefined ? code(schema.default) : required ? 'required' : '';
  return `| ${code(name)} | ${cell(typeOf(schema))} | ${cell(fallback)} | ${cell(notes)} |`;
}

function table(object) {
  const required = new Set(object.required ?? []);
  return [
    '| field | value | default | meaning |',
    '| --- | --- | --- | --- |',
    ...Object.entries(object.properties).map(([name, schema]) => row(name, schema, required.has(name))),
  ];
}

/** The one branch of an anyOf that is an object (`verify`: an object or null). */
const objectBranch = (schema) => (schema.anyOf ?? []).find((branch) => branch.type === 'object');

/** The Markdown between the region's markers: the top level, a token, then each sink type's options. */
export function policyFieldTables(schema) {
  const token = schema.properties.tokens.items;
  const sinks = token.properties.sinks.items.allOf.map((branch) => [branch.if.properties.type.const, branch.then]);
  const lines = ['### The file', '', ...table(schema), '', '### A token (and `defaults`)', ''];
  lines.push("Every field but `name`, `id` and `sinks` may also be set in `defaults`; a token's own value wins.", '');
  lines.push(...table(token), '');
  const verify = objectBranch(token.properties.verify);
  if (verify) lines.push('### `verify`', '', ...table(verify), '');
  lines.push('### A notification', '', ...table(schema.properties.notifications.items), '');
  for (const [type, options] of sinks) {
    const { type: _type, ...rest } = options.properties;
    // Each sink type's page is named after the type (docs/sinks/<type>.md) and explains every option.
    lines.push(`### Sink \`${type}\``, '', `See [its page](../sinks/${type}.md).`, '', ...table({ ...options, properties: rest }), '');
  }
  return lines.join('\n').trimEnd();
}

/** The page with its generated region replaced; an error when the page lacks the markers. */
export function withGeneratedRegion(page, generated) {
  const start = page.indexOf(REGION_START);
  const end = page.indexOf(REGION_END);
  if (start === -1 || end < start) throw new Error(`the page lacks the markers ${REGION_START} … ${REGION_END}`);
  return `${page.slice(0, start + REGION_START.length)}\n${generated}\n${page.slice(end)}`;
}
