import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { ConfigIssue } from '../../src/errors.js';
import { namespaceOrDefault } from '../../src/kubernetes/default-namespace.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function kubeconfig(namespace: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]',
    `contexts: [{ name: ctx, context: { cluster: c, user: u, namespace: ${namespace} } }]`,
    'current-context: ctx',
    'users: [{ name: u, user: { token: abc } }]',
  ].join('\n');
}

describe('the default namespace of sinks that name none', () => {
  const tmp = { path: '' };
  beforeEach(async () => {
    tmp.path = await makeTempDir();
  });
  afterEach(async () => {
    await rm(tmp.path, { recursive: true, force: true });
  });

  it('is read once per policy parse, and afresh at the next (a reload sees a changed kubeconfig)', async () => {
    const file = join(tmp.path, 'kubeconfig');
    writeFileSync(file, kubeconfig('apps'));
    const env = { KUBECONFIG: file };
    const issues: ConfigIssue[] = [];
    expect(namespaceOrDefault({}, env, issues)).toBe('apps');
    // The same parse (the same turn): the file is not read again for the next sink.
    writeFileSync(file, kubeconfig('changed'));
    expect(namespaceOrDefault({}, env, issues)).toBe('apps');
    // A namespace given is taken as given.
    expect(namespaceOrDefault({ namespace: 'ops' }, env, issues)).toBe('ops');
    await nextTurn();
    expect(namespaceOrDefault({}, env, issues)).toBe('changed');
    expect(issues).toEqual([]);
  });

  it('with no kubeconfig and no cluster: an issue at namespace, per sink', () => {
    const env = { KUBECONFIG: join(tmp.path, 'missing') };
    const issues: ConfigIssue[] = [];
    expect(namespaceOrDefault({}, env, issues)).toBeUndefined();
    expect(namespaceOrDefault({}, env, issues)).toBeUndefined();
    expect(issues).toHaveLength(2);
    expect(issues[0]!.path).toBe('namespace');
  });
});
