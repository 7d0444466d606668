// kustomize as kubectl embeds it (`kubectl kustomize`), the build users run with `kubectl apply -k`.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { stringify } from 'yaml';

/**
 * The YAML stream `kubectl kustomize DIR` prints.
 * @param {string} dir a kustomization folder
 * @returns {Promise<string>}
 */
export function kustomize(dir) {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', dir], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const cause =
          /** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT' ? 'kubectl is not on PATH' : stderr.trim() || error.message;
        reject(new Error(`kubectl kustomize ${dir} failed: ${cause}`));
      } else resolve(stdout);
    });
  });
}

/**
 * An overlay rendered with its image replaced, the way a user's own kustomization replaces it: a
 * temporary kustomization with the overlay as its resource and an `images:` entry. kustomize takes
 * no absolute resource paths, hence the relative one.
 * @param {string} dir the overlay
 * @param {{ name: string, newName: string, newTag: string, digest?: string }} image
 */
export async function kustomizeWithImage(dir, image) {
  const wrapper = await mkdtemp(join(tmpdir(), 'token-rotator-release-'));
  try {
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [relative(wrapper, dir)],
      images: [image],
    };
    await writeFile(join(wrapper, 'kustomization.yaml'), stringify(kustomization));
    return await kustomize(wrapper);
  } finally {
    await rm(wrapper, { recursive: true, force: true });
  }
}
