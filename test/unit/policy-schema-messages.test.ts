import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { policyProblems } from '../helpers/config-problems.js';

const FILE = '/etc/rotator/rotation.yaml';

describe('policy validation in one pass', () => {
  it('reports duplicates and a renewBefore not shorter than the lifetime beside field errors', () => {
    const found = policyProblems(`
version: "1"
defaults: { renewBefore: 30d, lifetime: 30d, overlap: a while }
tokens:
  - { name: a, id: "1", colour: red, sinks: [{ type: file, path: a }] }
  - { name: a, id: "2", sinks: [{ type: file }] }
`);
    expect(found).toEqual(
      expect.arrayContaining([
        'version: must be the number 1, not the string "1": write version: 1 without quotes',
        expect.stringMatching(/^defaults\.overlap: 'a while' is not a duration/),
        expect.stringMatching(/^tokens\[0\]\.colour: unknown key/),
        'tokens[1].sinks[0].path: required',
        "tokens[1].name: 'a' is already used by tokens[0]; names must be unique",
        'tokens[0].renewBefore (from defaults): 30d is not shorter than lifetime 30d: every new token would be due at once',
        'tokens[1].renewBefore (from defaults): 30d is not shorter than lifetime 30d: every new token would be due at once',
      ]),
    );
    expect(found).toHaveLength(7);
  });

  it('does not compare with a setting that is itself refused', () => {
    // the lifetime is wrong, so "renewBefore not shorter than it" cannot be judged: one problem, not two
    expect(
      policyProblems(
        `version: 1\ndefaults: { lifetime: 1 month }\ntokens: [{ name: a, id: "1", renewBefore: 40d, sinks: [{ type: file, path: a }] }]`,
      ),
    ).toEqual([expect.stringMatching(/^defaults\.lifetime: '1 month'/)]);
  });

  it('says "must be 1" of another number, without the hint about quotes', () => {
    expect(policyProblems('version: 2\ntokens: []')).toEqual(['version: must be 1']);
  });
});

describe('a policy with no tokens', () => {
  it('is valid, with a warning', () => {
    expect(parsePolicy('version: 1\ntokens: []', FILE).warnings).toEqual([
      { path: 'tokens', message: 'the policy lists no tokens: nothing will be checked or rotated' },
    ]);
    expect(parsePolicy('version: 1\ntokens: [{ name: a, id: "1", sinks: [{ type: file, path: a }] }]', FILE).warnings).toEqual([]);
  });
});
