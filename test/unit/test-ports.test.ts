import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** Every test source file. */
async function testFiles(dir = join(root, 'test')): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? testFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [join(dir, e.name)] : []),
    ),
  );
  return nested.flat();
}

/**
 * Ways a test could take a port of its own choosing instead of one the system gives it
 * (`listen(0)`, `127.0.0.1:0`, `freePort()`): a README session, another test file or anything else
 * on the machine may hold it, and `npm test` must run beside them.
 */
const CHOSEN_PORT = [
  /\.listen\(\s*[1-9]\d*/,
  /(?:startCli|runCli|spawn|execFile)\(.*'--(?:port|listen)',\s*'(?:[^']*:)?[1-9]\d*'/,
  /ROTATOR_LISTEN:\s*['"`](?:[^'"`]*:)?[1-9]\d*['"`]/,
  /\d{4,}\s*\+\s*Math\.floor\(Math\.random\(\)/,
];

describe('the tests listen only on ports the system picks', () => {
  it('no test listens on a port it chose', async () => {
    const found: string[] = [];
    for (const file of await testFiles()) {
      if (file === import.meta.filename) continue;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (CHOSEN_PORT.some((pattern) => pattern.test(line))) found.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});
