import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { expect, it } from 'vitest';

import { ROOT, runScript } from '../helpers/scripts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const BASE = 'config/kubernetes/base/kustomization.yaml';

it("npm run image-tag:sync sets the base Component's image tag to the package version, changing nothing else", async () => {
  const root = await makeTempDir('token-rotator-image-tag-');
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  await writeFile(join(root, 'package.json'), JSON.stringify({ ...pkg, version: '7.8.9-rc.1' }));
  await mkdir(join(root, 'config/kubernetes/base'), { recursive: true });
  const before = await readFile(join(ROOT, BASE), 'utf8');
  await writeFile(join(root, BASE), before);

  const result = await runScript('sync-image-tag.mjs', ['--root', root]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe(`${BASE}: image tag set to 7.8.9-rc.1\n`);
  const after = await readFile(join(root, BASE), 'utf8');
  const changed = after.split('\n').filter((line, i) => line !== before.split('\n')[i]);
  expect(changed).toEqual(['    newTag: 7.8.9-rc.1']);
  expect(after.split('\n')).toHaveLength(before.split('\n').length);

  const again = await runScript('sync-image-tag.mjs', ['--root', root]);
  expect(again.stdout).toBe(`${BASE}: image tag already 7.8.9-rc.1\n`);
});
