#!/usr/bin/env node
// `npm run image-tag:sync`: sets the image tag of the base Component (the `images:` entry for
// `token-rotator` in config/kubernetes/base/kustomization.yaml) to package.json's version. Run it
// with every version bump, before the release commit and tag: the overlays used as remote bases
// (`kubectl apply -k '...//config/kubernetes/overlays/cronjob?ref=vX.Y.Z'`) run the image of the tag
// they are fetched at only if the tag's kustomization names it. Edits that one value and keeps the
// file's comments and layout. --root DIR works on another checkout.
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { parseDocument } from 'yaml';

import { BASE_KUSTOMIZATION, IMAGE_PLACEHOLDER } from './lib/image-setting.mjs';
import { ROOT } from './lib/root.mjs';
import { exitWithProblems, parseScriptArguments } from './lib/script-arguments.mjs';

const SCRIPT = 'image-tag:sync';
const { values, positionals } = parseScriptArguments(SCRIPT, { root: { type: 'string' } });
if (positionals.length > 0) exitWithProblems(SCRIPT, [`unexpected argument ${positionals[0]}`]);
const root = resolve(values.root ?? ROOT);
const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const file = join(root, BASE_KUSTOMIZATION);
const document = parseDocument(await readFile(file, 'utf8'));
const images = /** @type {import('yaml').YAMLSeq<import('yaml').YAMLMap> | undefined} */ (document.get('images'));
const entry = images?.items?.find((item) => item.get?.('name') === IMAGE_PLACEHOLDER);
if (!entry) exitWithProblems(SCRIPT, [`${BASE_KUSTOMIZATION}: no images entry with name ${IMAGE_PLACEHOLDER}`]);
if (String(entry.get('newTag')) === version) process.stdout.write(`${BASE_KUSTOMIZATION}: image tag already ${version}\n`);
else {
  entry.set('newTag', version);
  await writeFile(file, document.toString());
  process.stdout.write(`${BASE_KUSTOMIZATION}: image tag set to ${version}\n`);
}
