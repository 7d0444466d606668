import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { parsePolicy } from '../../src/config/load-policy.js';

const root = resolve(import.meta.dirname, '../..');

/** The policies users copy from: config/rotation.yaml and the ones inside the Kubernetes examples. */
const examples: Array<[string, string]> = [
  ['config/rotation.yaml', readFileSync(resolve(root, 'config/rotation.yaml'), 'utf8')],
  ...['cronjob', 'sidecar'].map((name): [string, string] => {
    const docs = parseAllDocuments(readFileSync(resolve(root, `config/kubernetes/${name}.yaml`), 'utf8')).map(
      (d) => d.toJS() as { kind: string; data?: Record<string, string> },
    );
    return [`config/kubernetes/${name}.yaml`, docs.find((d) => d.kind === 'ConfigMap')!.data!['rotation.yaml']!];
  }),
];

describe('example policies', () => {
  it.each(examples)('%s is a valid policy', (_file, text) => {
    expect(parsePolicy(text, '/etc/token-rotator/rotation.yaml').tokens.length).toBeGreaterThan(0);
  });
});
