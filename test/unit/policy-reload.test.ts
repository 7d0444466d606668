import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { ConfigError } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const FILE = '/etc/rotator/rotation.yaml';
/** No cluster and no kubeconfig: a namespace must then be written. */
const NO_KUBERNETES = { HOME: '/nonexistent', KUBECONFIG: '/nonexistent/config' };

function problems(text: string): string[] {
  try {
    parsePolicy(text, FILE, { env: NO_KUBERNETES });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected the policy to be refused');
}

describe('reload in the policy', () => {
  it("gives each token the defaults' reloads unless it has its own list; an empty list turns them off", () => {
    const policy = parsePolicy(
      `
version: 1
defaults:
  reload:
    - { type: rollout, name: ingest-api, namespace: apps }
tokens:
  - { name: a, id: "1", sinks: [{ type: file, path: a }] }
  - name: b
    id: "2"
    sinks: [{ type: file, path: b }]
    reload:
      - { type: rollout, kind: StatefulSet, selector: { app: ingest }, namespace: data }
      - { type: webhook, urlFrom: B_RELOAD_URL, secretFrom: B_RELOAD_HMAC }
  - { name: c, id: "3", sinks: [{ type: file, path: c }], reload: [] }
`,
      FILE,
      { env: NO_KUBERNETES },
    );
    const [a, b, c] = policy.tokens;
    expect(a!.reload).toEqual([{ type: 'rollout', kind: 'Deployment', namespace: 'apps', workload: { name: 'ingest-api' } }]);
    expect(a!.reloadAt).toBe('defaults.reload');
    expect(b!.reload).toEqual([
      { type: 'rollout', kind: 'StatefulSet', namespace: 'data', workload: { selector: { app: 'ingest' } } },
      { type: 'webhook', urlFrom: 'B_RELOAD_URL', secretFrom: 'B_RELOAD_HMAC' },
    ]);
    expect(b!.reloadAt).toBe('tokens[1].reload');
    expect(c!.reload).toEqual([]);
  });

  it("takes the namespace of a rollout from the kubeconfig's current context when none is written", async () => {
    const dir = await makeTempDir();
    const kubeconfig = join(dir, 'config');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: dev',
        'contexts: [{ name: dev, context: { cluster: c, user: u, namespace: team-a } }]',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]',
        'users: [{ name: u, user: { token: t } }]',
      ].join('\n'),
    );
    const text = 'version: 1\ntokens:\n  - { name: a, id: "1", sinks: [{ type: file, path: a }], reload: [{ type: rollout, name: x }] }\n';
    const policy = parsePolicy(text, FILE, { env: { KUBECONFIG: kubeconfig, HOME: dir } });
    expect(policy.tokens[0]!.reload).toEqual([{ type: 'rollout', kind: 'Deployment', namespace: 'team-a', workload: { name: 'x' } }]);
    // Without one, the namespace is required: said with its path.
    expect(problems(text)).toEqual([
      'tokens[0].reload[0].namespace: required here: not in a cluster, and no kubeconfig context to take it from',
    ]);
  });

  it('names every problem of every reload with its path, in defaults and in tokens', () => {
    expect(
      problems(`
version: 1
defaults:
  reload:
    - { type: rollout, namespace: apps }
    - { type: restart }
tokens:
  - name: a
    id: "1"
    sinks: [{ type: file, path: a }]
    reload:
      - { type: rollout, name: x, selector: { app: x }, namespace: apps }
      - { type: rollout, selector: {}, namespace: apps }
      - { type: rollout, kind: Job, name: "Bad_Name", namespace: apps }
      - { type: webhook, urlFrom: "not-a-variable" }
      - { type: webhook, urlFrom: OK_URL, url: "https://example.com" }
      - "rollout"
`),
    ).toEqual([
      'defaults.reload[0].name: give either name or selector (labels to match), not both',
      'defaults.reload[1].type: unknown reload type "restart"; one of: rollout, webhook',
      'tokens[0].reload[0].selector: give either name or selector (labels to match), not both',
      'tokens[0].reload[1].selector: an empty selector would restart every workload in the namespace; name at least one label',
      expect.stringMatching(/^tokens\[0\]\.reload\[2\]\.kind: /),
      expect.stringMatching(/^tokens\[0\]\.reload\[2\]\.name: must be a Kubernetes object name/),
      expect.stringMatching(/^tokens\[0\]\.reload\[3\]\.urlFrom: must be the name of an environment variable/),
      expect.stringMatching(/^tokens\[0\]\.reload\[4\]\.url: /),
      'tokens[0].reload[5].type: required; one of: rollout, webhook',
    ]);
  });

  it('refuses a reload list that is not a list', () => {
    expect(
      problems(`version: 1\ntokens:\n  - { name: a, id: "1", sinks: [{ type: file, path: a }], reload: { type: webhook } }\n`),
    ).toEqual(['tokens[0].reload: expected array, got a mapping']);
  });
});
