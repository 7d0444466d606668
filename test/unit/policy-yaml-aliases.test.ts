import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadPolicy, parsePolicy } from '../../src/config/load-policy.js';
import { configProblems } from '../helpers/config-problems.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const FILE = '/etc/rotator/rotation.yaml';

const problemsOf = configProblems;

// "Billion laughs": each level repeats the one before nine times, so the last alias would stand for 9^6 values.
const ALIAS_BOMB = `version: 1
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
tokens: *f
`;

// The library counts an anchor's own value as one use, so *b already stands for 10 x 10 values and the
// first *c (line 5, column 8) is the alias that goes past 100.
const BOMB_PROBLEM = `${FILE}:5:8: alias *c expands beyond the limit of 100 aliased values, a guard against resource exhaustion ("billion laughs"); use fewer or less nested aliases`;

describe('YAML aliases in a policy', () => {
  it('refuses an alias bomb as a configuration problem at the alias that went past the limit', async () => {
    expect(await problemsOf(() => parsePolicy(ALIAS_BOMB, FILE))).toEqual([BOMB_PROBLEM]);
  });

  it('names an undefined alias and where it is', async () => {
    expect(await problemsOf(() => parsePolicy('version: 1\ntokens: *a\n', FILE))).toEqual([
      `${FILE}:2:9: alias *a is not defined; an alias needs an anchor &a earlier in the file`,
    ]);
  });

  it('names every undefined alias at once, including one used before its anchor', async () => {
    const text = `version: 1
defaults: { overlap: *overlap }
tokens:
  - { name: a, id: "1", renewBefore: *later, sinks: [{ type: file, path: a }] }
  - { name: b, id: "2", renewBefore: &later 5d, sinks: [{ type: file, path: b }] }
`;
    expect(await problemsOf(() => parsePolicy(text, FILE))).toEqual([
      `${FILE}:2:22: alias *overlap is not defined; an alias needs an anchor &overlap earlier in the file`,
      `${FILE}:4:38: alias *later is not defined; an alias needs an anchor &later earlier in the file`,
    ]);
  });

  it('keeps anchors and aliases that expand to a sane size working', () => {
    const policy = parsePolicy(
      `version: 1
tokens:
  - { name: a, id: "1", renewBefore: &short 2d, lifetime: &life 14d, sinks: [{ type: file, path: a }] }
  - { name: b, id: "2", renewBefore: *short, lifetime: *life, sinks: [{ type: file, path: b }] }
`,
      FILE,
    );
    expect(policy.tokens.map((t) => t.settings.lifetimeMs)).toEqual([14 * 86400_000, 14 * 86400_000]);
  });

  it('refuses both through loadPolicy on a real file', async () => {
    const dir = await makeTempDir();
    const bomb = join(dir, 'bomb.yaml');
    const undefinedAlias = join(dir, 'undefined-alias.yaml');
    await writeFile(bomb, ALIAS_BOMB);
    await writeFile(undefinedAlias, 'version: 1\ntokens: *a\n');
    expect(await problemsOf(() => loadPolicy(bomb))).toEqual([BOMB_PROBLEM.replace(FILE, bomb)]);
    expect(await problemsOf(() => loadPolicy(undefinedAlias))).toEqual([
      `${undefinedAlias}:2:9: alias *a is not defined; an alias needs an anchor &a earlier in the file`,
    ]);
  });
});
