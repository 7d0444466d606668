import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { policyJsonSchema } from '../../src/config/policy-json-schema.js';
import { sinkTypes } from '../../src/sinks/registry.js';
import { codeBlocks, docPages } from '../helpers/doc-pages.js';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

const schema = policyJsonSchema();
// A real JSON Schema validator, strict: a keyword it does not know is an error, not ignored.
const validate = new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(schema);

function errorsOf(policy: unknown): string[] {
  return validate(policy) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

const EXAMPLE_FILES = [
  'config/rotation.yaml',
  'config/kubernetes/policy/rotation.yaml',
  'config/kubernetes/overlays/sidecar/rotation.yaml',
];

/**
 * Every YAML block of the README and of docs/, as a whole policy: sink and notification snippets are
 * put in one. A block marked `<!-- yaml: not a policy -->` (alert rules, say) is left out.
 */
function docPolicies(): Array<[string, unknown]> {
  return docPages().flatMap((page) =>
    codeBlocks(page)
      .filter((block) => block.language === 'yaml' && block.marker !== 'yaml: not a policy')
      .flatMap((block) => asPolicies(page, block.line, block.text)),
  );
}

function asPolicies(page: string, line: number, text: string): Array<[string, unknown]> {
  // A block of alternatives, one a line (`onDrift: rotate` / `onDrift: report`), is one example a line.
  let blocks: Array<{ line: number; value: unknown }>;
  try {
    blocks = [{ line, value: parse(text) as unknown }];
  } catch {
    blocks = text
      .split('\n')
      .filter(Boolean)
      .map((each, i) => ({ line: line + 1 + i, value: parse(each) as unknown }));
  }
  return blocks.flatMap(({ line, value }) => {
    const at = `${page}:${line}`;
    const token = { name: 'a', id: 'a1', sinks: [{ type: 'file', path: 'a.token' }] };
    if (Array.isArray(value)) return [[at, { version: 1, tokens: [{ ...token, sinks: value }] }]];
    const mapping = value as Record<string, unknown>;
    // A kustomization or a Kubernetes object (the Install section's) is not a policy.
    if ('resources' in mapping || 'apiVersion' in mapping) return [];
    if ('version' in mapping) return [[at, mapping]];
    if ('notifications' in mapping) return [[at, { version: 1, ...mapping, tokens: [token] }]];
    // a token's settings (reload, onDrift...)
    return [[at, { version: 1, tokens: [{ ...token, ...mapping }] }]];
  });
}

describe("the policy's JSON Schema", () => {
  it.each(EXAMPLE_FILES)('accepts %s, which names it for editors', (file) => {
    const text = read(file);
    expect(errorsOf(parse(text))).toEqual([]);
    const named = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)?.[1];
    expect(named, 'the modeline').toBeDefined();
    expect(resolve(dirname(resolve(root, file)), named!)).toBe(resolve(root, 'dist/policy.schema.json'));
  });

  it('accepts every policy and snippet of the README and of docs/', () => {
    const examples = docPolicies();
    expect(examples.length).toBeGreaterThan(5);
    for (const [where, policy] of examples) expect(errorsOf(policy), where).toEqual([]);
  });

  it("knows every sink type's own options", () => {
    const sinkItem = (
      schema as { properties: { tokens: { items: { properties: { sinks: { items: { properties: { type: { enum: string[] } } } } } } } } }
    ).properties.tokens.items.properties.sinks.items;
    expect(sinkItem.properties.type.enum.sort()).toEqual(Object.keys(sinkTypes).sort());
  });

  it.each([
    ['a version given as text', { version: '1', tokens: [] }, '/version'],
    ['an unknown key', { version: 1, colour: 'red', tokens: [] }, ' must NOT have additional properties'],
    ['a token without sinks', { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [] }] }, '/tokens/0/sinks'],
    ['a bad token name', { version: 1, tokens: [{ name: '-a', id: 'a1', sinks: [{ type: 'file', path: 'a' }] }] }, '/tokens/0/name'],
    ['an unknown sink type', { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'pigeon' }] }] }, '/tokens/0/sinks/0/type'],
    [
      "a file sink's format it does not have",
      { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'file', path: 'a', format: 'yaml' }] }] },
      '/tokens/0/sinks/0/format',
    ],
    [
      "another sink type's option",
      { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'vault', path: 'apps/a', vaultUrl: 'https://v' }] }] },
      '/tokens/0/sinks/0 must NOT have additional properties',
    ],
    [
      'a file sink without its path',
      { version: 1, tokens: [{ name: 'a', id: 'a1', sinks: [{ type: 'file' }] }] },
      "must have required property 'path'",
    ],
  ])('rejects %s', (_what, policy, expected) => {
    expect(errorsOf(policy).join('\n')).toContain(expected);
  });
});
