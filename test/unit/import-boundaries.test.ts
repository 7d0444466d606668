import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/boundaries/', import.meta.url));
const depcruiseBin = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url));
/**
 * What `npm run lint:deps` cruises: the product and the workspace packages' sources, named one by one
 * as the shell expands the packages glob (a glob handed to depcruise makes it walk node_modules,
 * where the root workspace links to itself).
 */
const roots = (cwd: string) => ['src', ...readdirSync(join(cwd, 'packages')).map((name) => `packages/${name}/src`)];

/**
 * Runs dependency-cruiser in `cwd` with the repository's own config and its default output, as
 * `npm run lint:deps` does. Each violation comes back on one line: `rule: from → to`, a cycle's files
 * joined by arrows.
 */
async function depcruise(cwd: string): Promise<{ exitCode: number; violations: string[]; output: string }> {
  const args = [depcruiseBin, ...roots(cwd), '--config', `${repo}.dependency-cruiser.cjs`];
  const { exitCode, stdout } = await promisify(execFile)(process.execPath, args, { cwd, maxBuffer: 16 * 1024 * 1024 }).then(
    (done) => ({ exitCode: 0, stdout: done.stdout }),
    (error: { code: number; stdout: string }) => ({ exitCode: error.code, stdout: error.stdout }),
  );
  const violations: string[] = [];
  for (const line of stdout.split('\n')) {
    const start = /^\s*error (.*)$/.exec(line);
    if (start) violations.push(start[1]!.trim());
    else if (/^\s{4,}\S/.test(line) && violations.length > 0) violations.push(`${violations.pop()!} ${line.trim()}`);
  }
  return { exitCode, violations: violations.sort(), output: stdout };
}

describe('import boundaries', () => {
  it('dependency-cruiser refuses each broken rule of the fixture, naming the rule and both files', async () => {
    const { exitCode, violations } = await depcruise(fixture);
    expect(exitCode).not.toBe(0);
    expect(violations).toEqual([
      'base-is-a-leaf: src/errors.ts → src/config/types.ts',
      'double-independent: packages/kubernetes-double/src/double.ts → packages/emulator/src/main.ts',
      'emulator-not-to-product: packages/emulator/src/bundled.ts → dist/cli/main.js',
      'emulator-not-to-product: packages/emulator/src/main.ts → src/config/types.ts',
      'folder-in-a-layer: src/gadgets/tool.ts → src/rotation/a.ts',
      'into-a-layer: src/policy/use.ts → src/gizmo/leaf.ts',
      'layer-policy: src/policy/decide.ts → src/config/types.ts',
      'no-circular: src/rotation/a.ts → src/rotation/b.ts → src/rotation/a.ts',
      'not-to-unresolvable: src/cli/missing.ts → ./nowhere.js',
      'product-not-to-packages: src/cli/demo.ts → packages/demo/src/demo.ts',
    ]);
  });

  it('the real tree keeps every rule', async () => {
    const { exitCode, violations, output } = await depcruise(repo);
    expect(violations).toEqual([]);
    expect(exitCode).toBe(0);
    // It looked at the product: a config that matched no file would pass as well.
    expect(output).toMatch(/no dependency violations found \([1-9]\d{2,} modules/);
  });

  it('ESLint, with the repository config, refuses an import() of anything but a string literal in the product and the packages', async () => {
    // The rule as eslint.config.js applies it; the fixture itself is outside the typed project.
    const rule = async (file: string) =>
      ((await new ESLint({ cwd: repo }).calculateConfigForFile(file)) as { rules: Record<string, unknown> }).rules['no-restricted-syntax'];
    const inProduct = await rule('src/cli/run.ts');
    expect(await rule('packages/emulator/src/main.ts')).toEqual(inProduct);
    const eslint = new ESLint({
      cwd: fixture,
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser },
          rules: { 'no-restricted-syntax': inProduct as Linter.RuleEntry },
        },
      ],
    });
    const [result] = await eslint.lintFiles(['src/cli/run.ts']);
    expect(result?.messages.map((m) => `${m.line}: ${m.ruleId}: ${m.message}`)).toEqual([
      '2: no-restricted-syntax: import() takes a string literal: every dependency must be visible to the build and to depcruise',
    ]);
  });
});
