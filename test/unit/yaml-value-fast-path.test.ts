import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { describe, expect, it, vi } from 'vitest';
import * as yaml from 'yaml';

import { documentValue, yamlValue } from '../../src/common/yaml-value.js';
import { ConfigError } from '../../src/errors.js';

// Passed through unchanged, only counted: which reads build the yaml library's Document.
vi.mock('yaml', async (original) => {
  const real = await original<typeof import('yaml')>();
  return { ...real, parseDocument: vi.fn(real.parseDocument) };
});

const ROOT = resolve(import.meta.dirname, '../..');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** A value, or the problems refused with: what a caller sees either way. */
function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (error instanceof ConfigError) return { issues: error.issues };
    throw error;
  }
}

/** The scalars, layouts and refusals a policy may hold, beside the files in the repository. */
const SNIPPETS = {
  'durations and a quoted id': 'version: 1\ntokens:\n  - name: a\n    id: "007"\n    overlap: 1h30m\n    warnBefore: P7D\n',
  'a file mode, octal and decimal': 'mode: 0600\nother: 0o600\nhex: 0x1F\n',
  'dates stay strings': 'at: 2024-01-01\nwhen: 2024-01-01T00:00:00Z\ntime: 12:30\n',
  'booleans and nulls as YAML 1.2 reads them': 'a: yes\nb: on\nc: True\nd: ~\ne: null\nf: NULL\ng:\n',
  numbers: 'a: 1e3\nb: .5\nc: -1\nd: .inf\ne: -.Inf\nf: 1_000\n',
  'a merge key is a plain key': 'a:\n  <<: {b: 1}\n  c: 2\n',
  'block and flow scalars': 'a: |\n  line one\n  line two\nb: >-\n  folded\n  text\nc: {d: [1, 2], e: "x"}\n',
  'an empty text': '',
  'only a comment': '# nothing\n',
  'a duplicate key': 'version: 1\nversion: 2\n',
  'a syntax error': 'tokens:\n  - name: a\n   id: x\n',
  'a tab as indentation': 'a: b\n\tc: d\n',
  'two documents': 'a: 1\n---\nb: 2\n',
  'an unknown tag js-yaml refuses and yaml reads': 'version: 1\nname: !custom x\n',
  'an anchor and alias': 'a: &x {b: 1}\nc: *x\n',
};

describe('the policy YAML fast path (js-yaml) reads what the yaml library reads', () => {
  const files = ['config', 'test/fixtures', 'examples'].flatMap((d) => {
    try {
      return yamlFiles(join(ROOT, d));
    } catch {
      return [];
    }
  });

  it('finds the repository files it compares', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))('%s: the same value or the same problems', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    expect(outcome(() => yamlValue(text, file))).toEqual(outcome(() => documentValue(text, file)));
  });

  it.each(Object.entries(SNIPPETS))('%s: the same value or the same problems', (_name, text) => {
    expect(outcome(() => yamlValue(text, 'p.yaml'))).toEqual(outcome(() => documentValue(text, 'p.yaml')));
  });

  it('a refusal is still named by the yaml library, at file:line:col', () => {
    expect(outcome(() => yamlValue(SNIPPETS['a duplicate key'], 'p.yaml'))).toEqual({
      issues: [expect.objectContaining({ path: 'p.yaml:2:1', line: 2, column: 1 })],
    });
  });

  it('a policy of thousands of tokens without aliases is read without the yaml Document (its peak: 180-205 MB at 5,000 tokens)', () => {
    const tokens = Array.from(
      { length: 2000 },
      (_, i) => `  - name: svc-${i}\n    id: tok-${i}\n    sinks: [{ type: file, path: s/${i} }]\n`,
    );
    vi.mocked(yaml.parseDocument).mockClear();
    const value = yamlValue(`version: 1\ntokens:\n${tokens.join('')}`, 'p.yaml') as { tokens: unknown[] };
    expect(value.tokens).toHaveLength(2000);
    expect(yaml.parseDocument).not.toHaveBeenCalled();
  });

  it('a document js-yaml refuses and yaml accepts still loads', () => {
    expect(yamlValue(SNIPPETS['an unknown tag js-yaml refuses and yaml reads'], 'p.yaml')).toEqual({ version: 1, name: 'x' });
  });
});
