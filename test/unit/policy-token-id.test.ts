import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { policyProblems } from '../helpers/config-problems.js';

const FILE = '/etc/rotator/rotation.yaml';

const problems = (text: string) => policyProblems(text, FILE);

const token = (name: string, id: string) => `  - { name: ${name}, id: ${JSON.stringify(id)}, sinks: [{ type: file, path: ${name} }] }`;

describe('token ids in a policy', () => {
  it.each([
    ['".."', '..', "'..' is not a token id: it would address another resource"],
    ['"."', '.', "'.' is not a token id: it would address another resource"],
    ['with a slash', 'abc/../def', 'must not contain "/", "\\", whitespace or control characters'],
    ['with a backslash', 'a\\b', 'must not contain "/", "\\", whitespace or control characters'],
    ['with a space', 'abc 123', 'must not contain "/", "\\", whitespace or control characters'],
    ['with a newline', 'abc\n', 'must not contain "/", "\\", whitespace or control characters'],
    ['of 257 characters', 'x'.repeat(257), 'must be at most 256 characters'],
  ])('refuses an id %s, which would not stay one URL path segment', (_what, id, message) => {
    expect(problems(`version: 1\ntokens:\n${token('a', id)}\n`)).toEqual([`tokens[0].id: ${message}`]);
  });

  it.each([
    ['digits', '123456', '123456'],
    ['a number in exponent form', '1e5', '100000'],
  ])('says to quote an id of %s, which YAML reads as a number', (_what, written, read) => {
    expect(problems(`version: 1\ntokens:\n  - { name: a, id: ${written}, sinks: [{ type: file, path: a }] }\n`)).toEqual([
      `tokens[0].id: expected string, got number: write it in quotes to keep it a string (YAML read it as ${read})`,
    ]);
  });

  it('reports a bad id together with every other problem, in one pass', () => {
    expect(
      problems(`version: 1
tokens:
${token('a', '..')}
  - { name: b, id: "ok", renewBefore: soon, sinks: [{ type: file }] }
${token('c', 'x/y')}
`),
    ).toEqual([
      "tokens[0].id: '..' is not a token id: it would address another resource",
      'tokens[1].renewBefore: \'soon\' is not a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D, or a share such as "33%"',
      'tokens[1].sinks[0].path: required',
      'tokens[2].id: must not contain "/", "\\", whitespace or control characters',
    ]);
  });

  it('accepts ids that are one plain segment', () => {
    const policy = parsePolicy(`version: 1\ntokens:\n${token('a', 'tok_01H.x-Y~z')}\n${token('b', '...')}\n`, FILE);
    expect(policy.tokens.map((t) => t.id)).toEqual(['tok_01H.x-Y~z', '...']);
  });
});
