import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadPolicy, parsePolicy } from '../../src/config/load-policy.js';
import { configProblems } from '../helpers/config-problems.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const MIB = 1024 * 1024;
const SMALL = 'version: 1\ntokens: []\n';
const TOO_BIG = 'a policy file may be at most 16 MiB (16777216 bytes); this one is bigger, so it was not parsed';

/** A valid policy padded with a comment to `bytes` bytes: only its size can be wrong. */
function paddedPolicy(bytes: number): string {
  return `${SMALL}#${'x'.repeat(bytes - SMALL.length - 2)}\n`;
}

const problemsOf = configProblems;

describe('policy file size', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  // 32 MiB of padding is too much to leave behind in the temp folder on every run.
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a file bigger than 16 MiB before parsing it', async () => {
    const file = join(dir, 'huge.yaml');
    await writeFile(file, paddedPolicy(16 * MIB + 1));
    expect(await problemsOf(() => loadPolicy(file))).toEqual([`${file}: ${TOO_BIG}`]);
  });

  it('reads a file of exactly 16 MiB', async () => {
    const file = join(dir, 'large.yaml');
    await writeFile(file, paddedPolicy(16 * MIB));
    expect((await loadPolicy(file)).tokens).toEqual([]);
  });

  it('refuses text bigger than 16 MiB given to parsePolicy, counting bytes, not characters', async () => {
    // 'é' is two bytes in UTF-8: fewer than 16 Mi characters, more than 16 MiB.
    const text = `${SMALL}#${'é'.repeat(8 * MIB)}\n`;
    expect(text.length).toBeLessThan(16 * MIB);
    expect(await problemsOf(() => parsePolicy(text, '/etc/rotator/rotation.yaml'))).toEqual([`/etc/rotator/rotation.yaml: ${TOO_BIG}`]);
  });
});
