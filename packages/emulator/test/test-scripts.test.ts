import { execFile } from 'node:child_process';
import { glob, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');

/**
 * `npm test -w <package>` runs that package's tests, through the root's vitest config. Checked by
 * listing the files its vitest command selects (`vitest list` in place of `vitest run`, so that no
 * test runs inside this one and no build is started), from the package's folder as npm runs it.
 */
describe.each([['emulator'], ['kubernetes-double']])('packages/%s has a test script', (folder) => {
  it('that selects exactly the tests in its test/ folder', async () => {
    const cwd = join(ROOT, 'packages', folder);
    const pkg = JSON.parse(await readFile(join(cwd, 'package.json'), 'utf8')) as { scripts: Record<string, string | undefined> };
    const script = pkg.scripts.test ?? '';
    const command = script.split('&&').at(-1)!.trim().split(/\s+/);
    expect(command.slice(0, 2), `the test script ${JSON.stringify(script)} ends with vitest run`).toEqual(['vitest', 'run']);

    const { stdout } = await run(process.execPath, [VITEST, 'list', '--filesOnly', '--json', ...command.slice(2)], {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    });
    const listed = (JSON.parse(stdout) as { file: string }[]).map((entry) => entry.file).sort();
    const expected: string[] = [];
    for await (const path of glob('test/**/*.test.ts', { cwd })) expected.push(join(cwd, path));
    expected.sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(listed).toEqual(expected);
  });
});
