import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { kubectlKustomize, overlayNames, ROOT } from '../helpers/scripts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The overlays as remote kustomize bases, the install path that needs no clone:
 *   kubectl apply -k 'https://github.com/<org>/token-rotator//config/kubernetes/overlays/cronjob?ref=vX.Y.Z'
 * kustomize clones the repository at the tag and builds the folder under its load restrictor. Here
 * the repository is a local git repository holding config/ alone (so that a reference out of
 * config/ would fail), tagged as a release is, and fetched through kustomize's file:// remote.
 */

const run = promisify(execFile);
const VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TAG = `v${VERSION}`;
const FOLDERS = [...(await overlayNames()).map((o) => `config/kubernetes/overlays/${o}`), 'config/monitoring'];

let repo: string;
beforeAll(async () => {
  repo = join(await makeTempDir('token-rotator-remote-base-'), 'token-rotator');
  await cp(join(ROOT, 'config'), join(repo, 'config'), { recursive: true });
  const git = (...args: string[]) =>
    run(
      'git',
      ['-c', 'user.name=release', '-c', 'user.email=release@example.com', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args],
      { cwd: repo },
    );
  await git('init', '--quiet');
  await git('add', '--all');
  await git('commit', '--quiet', '--message', 'release');
  await git('tag', TAG);
});

describe('the overlays as remote kustomize bases, by tag', () => {
  it.each(FOLDERS)('%s?ref=vVERSION builds from the tagged repository as it does locally', async (folder) => {
    const remote = await kubectlKustomize(`file://${repo}//${folder}?ref=${TAG}`);
    expect(remote).toBe(await kubectlKustomize(join(ROOT, folder)));
  });

  it("runs the tag's own image: the base Component's image tag is the package version", async () => {
    const base = parse(await readFile(join(ROOT, 'config/kubernetes/base/kustomization.yaml'), 'utf8')) as {
      images: Array<{ name: string; newTag: string }>;
    };
    expect(
      base.images.find((i) => i.name === 'token-rotator')?.newTag,
      'config/kubernetes/base/kustomization.yaml images[token-rotator].newTag must be bumped with package.json "version"',
    ).toBe(VERSION);
    const rendered = await kubectlKustomize(`file://${repo}//config/kubernetes/overlays/cronjob?ref=${TAG}`);
    expect(rendered).toMatch(new RegExp(`image: \\S+/token-rotator:${VERSION.replaceAll('.', '\\.')}\\n`));
  });
});
