// The image every overlay runs, set in one place: the `images:` entry of the base Component
// (config/kubernetes/base/kustomization.yaml) that turns the workloads' `image: token-rotator` into
// the published repository and tag. The release renderer, and anyone using an overlay as a remote
// base, get the repository from there; change the registry or name there and nowhere else.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parse } from 'yaml';

/** What the workloads write as their image, for the base's `images:` entry to replace. */
export const IMAGE_PLACEHOLDER = 'token-rotator';
export const BASE_KUSTOMIZATION = 'config/kubernetes/base/kustomization.yaml';

/**
 * @param {string} root the project folder
 * @returns {Promise<{ repository: string, tag: string | undefined }>}
 */
export async function imageSetting(root) {
  const kustomization = parse(await readFile(join(root, BASE_KUSTOMIZATION), 'utf8'));
  const entry = (kustomization?.images ?? []).find((/** @type {{ name?: string }} */ image) => image.name === IMAGE_PLACEHOLDER);
  if (typeof entry?.newName !== 'string')
    throw new Error(`${BASE_KUSTOMIZATION}: no images entry with name ${IMAGE_PLACEHOLDER} and a newName (the image repository)`);
  return { repository: entry.newName, tag: entry.newTag === undefined ? undefined : String(entry.newTag) };
}

/** An image reference as kustomize writes it: repository:tag, and @digest when one is given. */
export const imageReference = (/** @type {string} */ repository, /** @type {string} */ tag, /** @type {string | undefined} */ digest) =>
  `${repository}:${tag}${digest ? `@${digest}` : ''}`;
