import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { npmLs, packageIds, ROOT, runScript } from '../helpers/scripts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * npm run sbom: a CycloneDX SBOM of the production tree, checked against npm ls. The expectations
 * here come from npm ls itself, not from the check script, so that a check that passes everything
 * would not go unnoticed.
 */

interface Component {
  name: string;
  group?: string;
  version: string;
  purl?: string;
  licenses?: Array<{ license?: { id?: string; name?: string }; expression?: string }>;
  components?: Component[];
}
interface Bom {
  bomFormat: string;
  specVersion: string;
  metadata: { component: Component };
  components: Component[];
}

const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; license: string };
const fullName = (c: Component) => (c.group ? `${c.group}/${c.name}` : c.name);
const idOf = (c: Component) => `${fullName(c)}@${c.version}`;
/** Every component, nested ones (a package installed under another's node_modules) included. */
const allComponents = (components: Component[]): Component[] => components.flatMap((c) => [c, ...allComponents(c.components ?? [])]);
const componentIds = (components: Component[]) => new Set(allComponents(components).map(idOf));
const findComponent = (components: Component[], name: string) => allComponents(components).find((c) => fullName(c) === name);

let dir: string;
let file: string;
let bom: Bom;
beforeAll(async () => {
  dir = await makeTempDir('token-rotator-sbom-');
  file = join(dir, 'sub/folder/sbom.cdx.json');
  const result = await runScript('sbom.mjs', ['--out', file]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain(file);
  bom = JSON.parse(await readFile(file, 'utf8')) as Bom;
}, 240_000);

describe('npm run sbom', () => {
  it('writes CycloneDX 1.6 JSON whose root component is this package at its version, with its license', () => {
    expect(bom.bomFormat).toBe('CycloneDX');
    expect(bom.specVersion).toBe('1.6');
    // The purl may carry qualifiers (vcs_url, from package.json's repository).
    expect(bom.metadata.component).toMatchObject({ name: pkg.name, version: pkg.version });
    expect(bom.metadata.component.purl?.split('?')[0]).toBe(`pkg:npm/${pkg.name}@${pkg.version}`);
    expect(bom.metadata.component.licenses?.map((l) => l.license?.id)).toEqual([pkg.license]);
  });

  it('lists exactly the packages of npm ls --omit=dev --workspaces=false, nested ones included', async () => {
    const production = packageIds(await npmLs(['dev']));
    expect(production.size).toBeGreaterThan(100);
    expect([...componentIds(bom.components)].sort()).toEqual([...production].sort());
    for (const runtime of ['pino', 'got', 'zod', '@aws-sdk/client-secrets-manager', 'google-gax'])
      expect(findComponent(bom.components, runtime), runtime).toBeDefined();
  });

  it("leaves out the workspace packages, what only they pull in (the emulator's oidc-provider) and every dev dependency", () => {
    for (const workspace of ['token-rotator-emulator', 'token-rotator-kubernetes-double', 'token-rotator-demo', 'oidc-provider'])
      expect(findComponent(bom.components, workspace), workspace).toBeUndefined();
    for (const dev of ['vitest', 'typescript', 'eslint', '@cyclonedx/cyclonedx-npm', 'kubernetes-models'])
      expect(findComponent(bom.components, dev), dev).toBeUndefined();
  });

  it('gives each component the license its package.json declares', async () => {
    const pino = findComponent(bom.components, 'pino')!;
    const declared = (JSON.parse(await readFile(join(ROOT, 'node_modules/pino/package.json'), 'utf8')) as { license: string }).license;
    expect(pino.licenses?.map((l) => l.license?.id ?? l.expression)).toEqual([declared]);
  });

  it('is reproducible: a second run writes the same bytes', async () => {
    const again = join(dir, 'again.cdx.json');
    const result = await runScript('sbom.mjs', ['--out', again]);
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(again, 'utf8')).toBe(await readFile(file, 'utf8'));
  });

  it('refuses an unknown option or a stray argument with exit 2 and writes nothing', async () => {
    for (const args of [['--output', join(dir, 'x.json')], [join(dir, 'x.json')]]) {
      const result = await runScript('sbom.mjs', args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^sbom: .*(--output|x\.json)/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('npm run sbom:check', () => {
  it('passes the SBOM npm run sbom wrote', async () => {
    const result = await runScript('check-sbom.mjs', [file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/complete, \d+ packages/);
  });

  it('names every defect of a damaged SBOM: a missing nested package, an extra one, a lost license, another root, an old spec', async () => {
    const damaged = structuredClone(bom);
    // A nested component (node_modules/a/node_modules/b) whose name@version is nowhere else in the tree.
    const everywhere = allComponents(damaged.components).map(idOf);
    const parent = damaged.components.find((c) =>
      (c.components ?? []).some((n) => everywhere.filter((id) => id === idOf(n)).length === 1),
    )!;
    const removed = parent.components!.find((n) => everywhere.filter((id) => id === idOf(n)).length === 1)!;
    parent.components = parent.components!.filter((n) => n !== removed);
    damaged.components.push({ name: 'left-pad', version: '1.3.0' });
    const pino = findComponent(damaged.components, 'pino')!;
    const pinoLicense = pino.licenses![0]!.license!.id;
    delete pino.licenses;
    damaged.metadata.component.version = '9.9.9';
    damaged.specVersion = '1.4';
    const path = join(dir, 'damaged.json');
    await writeFile(path, JSON.stringify(damaged));

    const result = await runScript('check-sbom.mjs', [path]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringContaining('specVersion is "1.4"'),
        expect.stringContaining(`metadata.component is ${pkg.name}@9.9.9, not ${pkg.name}@${pkg.version}`),
        expect.stringContaining('left-pad@1.3.0 is a component of the SBOM but not in'),
        expect.stringContaining(`pino@${pino.version} declares the license ${pinoLicense} in its package.json, the SBOM gives []`),
        expect.stringContaining(`${idOf(removed)} is in npm ls's production tree but not a component of the SBOM`),
      ]),
    );
  });

  it('refuses a missing file or no argument with exit 2', async () => {
    for (const args of [[], [join(dir, 'absent.json')]]) {
      const result = await runScript('check-sbom.mjs', args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^sbom:check: /);
    }
  });
});
