import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkReferences, referenceReader } from '../../src/common/reference.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('credentials by reference', () => {
  it('names each reference that is not set, or set twice, with its path; a set one passes', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'token'), 'from-a-file\n');
    const env = { SET: 'value', BOTH: 'x', BOTH_FILE: 'token', VIA_FILE_FILE: 'token', BROKEN_FILE: 'nope' };
    const references = ['SET', 'VIA_FILE', 'MISSING', 'BOTH', 'BROKEN'].map((variable, i) => ({
      path: `tokens[0].sinks[${i}].tokenFrom`,
      variable,
    }));
    expect(checkReferences(references, env, dir)).toEqual([
      { path: 'tokens[0].sinks[2].tokenFrom', message: 'MISSING (or MISSING_FILE) is not set' },
      { path: 'env.BOTH_FILE', message: 'both BOTH and BOTH_FILE are set; set one' },
      { path: 'env.BROKEN_FILE', message: 'cannot read nope: ENOENT' },
    ]);
  });

  it('reads a reference as a Secret, from the variable or its file, and nothing when unset', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'token'), 'xaat-from-a-file\n');
    const read = referenceReader({ DIRECT: 'xaat-direct', VIA_FILE: undefined, VIA_FILE_FILE: 'token' }, dir);
    expect(read('DIRECT')?.reveal()).toBe('xaat-direct');
    expect(read('VIA_FILE')?.reveal()).toBe('xaat-from-a-file');
    expect(String(read('DIRECT'))).toBe('[REDACTED]');
    expect(read('NOT_SET')).toBeUndefined();
  });
});
