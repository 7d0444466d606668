import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh real folder under the OS temp folder. */
export async function makeTempDir(prefix = 'token-rotator-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}
