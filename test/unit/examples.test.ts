import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';

import { parsePolicy } from '../../src/config/load-policy.js';

const root = resolve(import.meta.dirname, '../..');

/**
 * The policies users copy from: config/rotation.yaml and the ones the Kubernetes examples mount
 * (their kustomizations generate the ConfigMaps from these files; the integration test
 * kubernetes-manifests.test.ts checks that the rendered ConfigMaps hold exactly these files).
 */
const examples = [
  'config/rotation.yaml',
  'config/kubernetes/policy/rotation.yaml', // the kubernetes-secret sink and a rollout reload
  'config/kubernetes/overlays/sidecar/rotation.yaml',
];

const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

describe('example policies', () => {
  it('lists every policy file under config/', () => {
    const found = (readdirSync(resolve(root, 'config'), { recursive: true }) as string[])
      .map((path) => `config/${path.split('\\').join('/')}`)
      .filter((path) => /(^|\/)rotation\.ya?ml$/.test(path))
      .sort();
    expect(found).toEqual([...examples].sort());
  });

  it.each(examples)('%s is one valid YAML document', (file) => {
    const document = parseDocument(read(file));
    expect(document.errors).toEqual([]);
  });

  it.each(examples)('%s is a valid policy', (file) => {
    expect(parsePolicy(read(file), '/etc/token-rotator/rotation.yaml').tokens.length).toBeGreaterThan(0);
  });
});
