import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { npmEnv } from '../helpers/npm-tarball.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const versionOf = async (folder: string, file: string) =>
  (JSON.parse(await readFile(join(folder, file), 'utf8')) as { version: string }).version;
const FIRST_VERSION_HEADING = /^## (\d+\.\d+\.\d+\S*)$/m;
const PACKAGES = ['kubernetes-double', 'emulator', 'demo'];

describe('versions and the changelog (Changesets)', () => {
  it("CHANGELOG.md's newest section is the version in package.json and package-lock.json", async () => {
    const version = await versionOf(root, 'package.json');
    expect(FIRST_VERSION_HEADING.exec(await readFile(join(root, 'CHANGELOG.md'), 'utf8'))?.[1]).toBe(version);
    expect(await versionOf(root, 'package-lock.json')).toBe(version);
  });

  describe('npm run version-packages, in a copy of the checkout with one pending changeset', () => {
    let copy: string;
    let before: string;

    beforeAll(async () => {
      copy = await makeTempDir('token-rotator-version-');
      await mkdir(join(copy, '.changeset'));
      for (const file of ['package.json', 'package-lock.json', 'CHANGELOG.md', '.changeset/config.json'])
        await copyFile(join(root, file), join(copy, file));
      // The workspaces' manifests: Changesets versions the published ones with the product (fixed).
      for (const name of PACKAGES) {
        await mkdir(join(copy, 'packages', name), { recursive: true });
        await copyFile(join(root, 'packages', name, 'package.json'), join(copy, 'packages', name, 'package.json'));
      }
      await symlink(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
      // Copied, not linked: the scripts work on the checkout they are in (version-packages syncs the
      // base's image tag), and must not touch this one.
      await cp(join(root, 'scripts'), join(copy, 'scripts'), { recursive: true });
      await cp(join(root, 'config/kubernetes/base/kustomization.yaml'), join(copy, 'config/kubernetes/base/kustomization.yaml'));
      await writeFile(join(copy, '.changeset/canary-fix.md'), "---\n'token-rotator': patch\n---\n\nA canary fix.\n");
      before = await readFile(join(copy, 'CHANGELOG.md'), 'utf8');
      // npm run puts node_modules/.bin first on PATH: the pinned Node runs Changesets.
      await run('npm', ['run', 'version-packages'], { cwd: copy, env: npmEnv() });
    }, 120_000);

    afterAll(async () => {
      await rm(copy, { recursive: true, force: true });
    });

    it('bumps the version in package.json and package-lock.json, and consumes the changeset', async () => {
      const [major, minor, patch] = (await versionOf(root, 'package.json')).split('.').map(Number);
      const next = `${major}.${minor}.${patch! + 1}`;
      expect(await versionOf(copy, 'package.json')).toBe(next);
      expect(await versionOf(copy, 'package-lock.json')).toBe(next);
      expect(await readdir(join(copy, '.changeset'))).toEqual(['config.json']);
      // The emulator and its Kubernetes double are published with the product, at its version; the demo is not.
      expect(await versionOf(copy, 'packages/emulator/package.json')).toBe(next);
      expect(await versionOf(copy, 'packages/kubernetes-double/package.json')).toBe(next);
      expect(await versionOf(copy, 'packages/demo/package.json')).toBe(await versionOf(root, 'packages/demo/package.json'));
      // The overlays fetched at the new tag run the new tag's image.
      expect(await readFile(join(copy, 'config/kubernetes/base/kustomization.yaml'), 'utf8')).toMatch(new RegExp(`newTag: "?${next}"?`));
    });

    it('writes the new section above the history, which it keeps as it was', async () => {
      const after = await readFile(join(copy, 'CHANGELOG.md'), 'utf8');
      const history = before.slice(before.search(FIRST_VERSION_HEADING));
      const newest = FIRST_VERSION_HEADING.exec(after)!;
      expect(newest[1]).toBe(await versionOf(copy, 'package.json'));
      expect(after.slice(0, newest.index)).toBe(before.slice(0, before.search(FIRST_VERSION_HEADING)));
      expect(after.slice(newest.index)).toMatch(/^## \S+\n\n### Patch Changes\n\n- A canary fix\.\n\n/);
      expect(after.endsWith(history)).toBe(true);
    });
  });
});
