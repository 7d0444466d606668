import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { type KubernetesDouble, startKubernetesDouble } from 'token-rotator-kubernetes-double';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { createKubernetesClient, LIST_PAGE_SIZE } from '../../src/kubernetes/client.js';
import { resolveConnection } from '../../src/kubernetes/connection.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let double: KubernetesDouble;
let dir: string;
const port = () => new URL(double.httpsUrl).port;
const ca64 = () => Buffer.from(double.ca).toString('base64');

beforeAll(async () => {
  double = await startKubernetesDouble({ namespaces: ['team-a', 'team-b'] });
});
afterAll(() => double.close());
beforeEach(async () => {
  dir = await makeTempDir();
  return () => rm(dir, { recursive: true, force: true });
});

/** A call that needs the bearer: listing Secrets in the connection's own namespace. */
async function listSecrets(env: Record<string, string>, serviceAccountDir?: string) {
  const connection = resolveConnection(env, serviceAccountDir ? { serviceAccountDir } : {});
  if (!connection) throw new Error('no connection');
  const client = createKubernetesClient(connection, { logger: silentLogger() });
  return { connection, client, list: () => client.list(`/api/v1/namespaces/${connection.namespace}/secrets`) };
}

/** A kubeconfig whose one context reaches the double as a user with these exec credentials. */
function execKubeconfig(exec: Record<string, unknown>): string {
  return kubeconfig({
    current: 'exec',
    contexts: [{ name: 'exec', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }],
    clusters: [{ name: 'c', cluster: { server: double.httpsUrl, 'certificate-authority-data': ca64() } }],
    users: [{ name: 'u', user: { exec } }],
  });
}

function kubeconfig(parts: { clusters?: unknown[]; users?: unknown[]; contexts?: unknown[]; current?: string }) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: parts.clusters ?? [],
    users: parts.users ?? [],
    contexts: parts.contexts ?? [],
    ...(parts.current ? { 'current-context': parts.current } : {}),
  });
}

describe('connecting as kubectl does', () => {
  it("in a pod: the service account's token, CA and namespace, with no setting; the token is read again after a 401, as the kubelet rotates it", async () => {
    const sa = join(dir, 'serviceaccount');
    await mkdir(sa);
    await writeFile(join(sa, 'token'), 'an-expired-projected-token');
    await writeFile(join(sa, 'ca.crt'), double.ca);
    await writeFile(join(sa, 'namespace'), 'team-a');
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port() };
    const { connection, list } = await listSecrets(env, sa);
    expect(connection).toMatchObject({
      namespace: 'team-a',
      describe: 'in-cluster service account',
      server: new URL(`https://127.0.0.1:${port()}`),
    });
    await expect(list()).rejects.toMatchObject({
      code: 'ERR_KUBERNETES',
      status: 401,
      message: expect.stringMatching(/credentials were refused/),
    });
    // The kubelet writes the fresh token: the next call reads it, without a restart.
    await writeFile(join(sa, 'token'), double.token);
    await expect(list()).resolves.toEqual([]);
  });

  it('elsewhere: KUBECONFIG, a list of files merged as kubectl merges them, and its current context and namespace', async () => {
    await writeFile(
      join(dir, 'a.yaml'),
      kubeconfig({
        current: 'dev',
        contexts: [{ name: 'dev', context: { cluster: 'double', user: 'me', namespace: 'team-b' } }],
        clusters: [{ name: 'double', cluster: { server: double.httpsUrl, 'certificate-authority-data': ca64() } }],
      }),
    );
    // The second file's entries of the same names lose; its own new ones count.
    await writeFile(
      join(dir, 'b.yaml'),
      kubeconfig({
        current: 'other',
        clusters: [{ name: 'double', cluster: { server: 'https://192.0.2.1:6443' } }],
        users: [{ name: 'me', user: { token: double.token } }],
      }),
    );
    const { connection, list } = await listSecrets({ KUBECONFIG: `${join(dir, 'a.yaml')}:${join(dir, 'b.yaml')}` });
    expect(connection).toMatchObject({ namespace: 'team-b', describe: 'kubeconfig context dev' });
    await expect(list()).resolves.toEqual([]);
  });

  it('without KUBECONFIG: ~/.kube/config, with relative paths read from beside it', async () => {
    await mkdir(join(dir, '.kube'));
    await writeFile(join(dir, '.kube', 'ca.pem'), double.ca);
    await writeFile(join(dir, '.kube', 'token'), double.token);
    await writeFile(
      join(dir, '.kube', 'config'),
      kubeconfig({
        current: 'home',
        contexts: [{ name: 'home', context: { cluster: 'c', user: 'u' } }],
        clusters: [{ name: 'c', cluster: { server: double.httpsUrl, 'certificate-authority': 'ca.pem' } }],
        users: [{ name: 'u', user: { tokenFile: 'token' } }],
      }),
    );
    const { connection, list } = await listSecrets({ HOME: dir });
    expect(connection.namespace).toBe('default');
    await expect(list()).resolves.toEqual([]);
  });

  it('runs an exec credential plugin as kubectl does, and keeps its credential until it expires', async () => {
    const plugin = join(dir, 'plugin.mjs');
    const calls = join(dir, 'calls');
    await writeFile(
      plugin,
      `#!${process.execPath}\n` +
        `import { appendFileSync } from 'node:fs';\n` +
        `const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);\n` +
        `appendFileSync(${JSON.stringify(calls)}, info.apiVersion + ' ' + (info.spec.cluster?.server ?? '-') + '\\n');\n` +
        `console.log(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: process.env.THE_TOKEN, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() } }));\n`,
    );
    await chmod(plugin, 0o755);
    await writeFile(
      join(dir, 'config'),
      execKubeconfig({
        apiVersion: 'client.authentication.k8s.io/v1',
        command: './plugin.mjs',
        env: [{ name: 'THE_TOKEN', value: double.token }],
        provideClusterInfo: true,
        interactiveMode: 'Never',
      }),
    );
    const { list } = await listSecrets({ KUBECONFIG: join(dir, 'config') });
    await expect(list()).resolves.toEqual([]);
    await expect(list()).resolves.toEqual([]);
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(calls, 'utf8')).trim().split('\n')).toEqual([`client.authentication.k8s.io/v1 ${double.httpsUrl}/`]);
  });

  it('says why the credentials could not be had, not that the API server is out of reach, and tries again on the next call', async () => {
    // A plugin that fails until it is fixed (kubelogin with an expired login, say): its stderr is the reason.
    const plugin = join(dir, 'plugin.mjs');
    const broken = `#!${process.execPath}\nconsole.error('login expired; run kubectl oidc-login');\nprocess.exit(1);\n`;
    await writeFile(plugin, broken);
    await chmod(plugin, 0o755);
    await writeFile(join(dir, 'config'), execKubeconfig({ apiVersion: 'client.authentication.k8s.io/v1', command: './plugin.mjs' }));
    const { list } = await listSecrets({ KUBECONFIG: join(dir, 'config') });
    const error = await list().then(
      () => expect.fail('listed without credentials'),
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error.code).toBe('ERR_KUBERNETES');
    expect(error.message).toMatch(/the kubeconfig exec credential plugin \.\/plugin\.mjs failed: login expired; run kubectl oidc-login/);
    expect(error.message).not.toMatch(/cannot reach/);

    // A token file that is not there (yet): its own reason, too.
    await writeFile(
      join(dir, 'config'),
      kubeconfig({
        current: 'file',
        contexts: [{ name: 'file', context: { cluster: 'c', user: 'u' } }],
        clusters: [{ name: 'c', cluster: { server: double.httpsUrl, 'certificate-authority-data': ca64() } }],
        users: [{ name: 'u', user: { tokenFile: 'missing-token' } }],
      }),
    );
    const file = await listSecrets({ KUBECONFIG: join(dir, 'config') });
    await expect(file.list()).rejects.toThrow(/^cannot read the service account token .*missing-token: ENOENT$/);

    // Fixed: the same client runs the plugin again, as a daemon would on its next cycle.
    await writeFile(
      plugin,
      `#!${process.execPath}\nconsole.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(double.token)} } }));\n`,
    );
    await expect(list()).resolves.toEqual([]);
  });

  it('connects on a later use when the kubeconfig was missing or half-written at the first, as a long-lived daemon needs', async () => {
    const { kubernetesClient } = await import('../../src/kubernetes/client.js');
    // One environment for the process's life, as the daemon has.
    const env = { KUBECONFIG: join(dir, 'config'), HOME: dir };
    await expect(kubernetesClient(env, silentLogger())).rejects.toThrow(/no Kubernetes here/);
    await writeFile(join(dir, 'config'), kubeconfig({ clusters: [{ name: 'c', cluster: { server: double.httpsUrl } }] }));
    await expect(kubernetesClient(env, silentLogger())).rejects.toThrow(/has no current-context/);
    await writeFile(
      join(dir, 'config'),
      kubeconfig({
        current: 'ok',
        contexts: [{ name: 'ok', context: { cluster: 'c', user: 'u', namespace: 'team-b' } }],
        clusters: [{ name: 'c', cluster: { server: double.httpsUrl, 'certificate-authority-data': ca64() } }],
        users: [{ name: 'u', user: { token: double.token } }],
      }),
    );
    const client = await kubernetesClient(env, silentLogger());
    await expect(client.list('/api/v1/namespaces/team-b/secrets')).resolves.toEqual([]);
    // Once connected, it is the one client of the process.
    expect(await kubernetesClient(env, silentLogger())).toBe(client);
  });

  it('refuses what it cannot do safely, naming the context: auth-provider, basic auth, plain http away from loopback', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp]> = [
      [
        { server: double.httpsUrl },
        { 'auth-provider': { name: 'gcp' } },
        /context 'x' uses the removed auth-provider mechanism; use an exec credential plugin/,
      ],
      [{ server: double.httpsUrl }, { username: 'admin', password: 'hunter2' }, /context 'x' uses basic auth/],
      [
        { server: 'http://192.0.2.10:8080' },
        { token: 't' },
        /plain http:\/\/ to 192\.0\.2\.10:8080 would send the bearer and secrets in clear/,
      ],
    ];
    for (const [cluster, user, message] of cases) {
      await writeFile(
        join(dir, 'config'),
        kubeconfig({
          current: 'x',
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
          clusters: [{ name: 'c', cluster }],
          users: [{ name: 'u', user }],
        }),
      );
      expect(() => resolveConnection({ KUBECONFIG: join(dir, 'config') })).toThrow(message);
    }
  });

  it('has no connection at all without a pod or a kubeconfig, and says so when used', async () => {
    expect(resolveConnection({ HOME: dir })).toBeUndefined();
    const { kubernetesClient } = await import('../../src/kubernetes/client.js');
    await expect(kubernetesClient({ HOME: dir }, silentLogger())).rejects.toThrow(
      /no Kubernetes here: not in a cluster .*and no kubeconfig/,
    );
  });
});

describe('listing', () => {
  it('lists in pages of 500, as kubectl does, and returns every object of every page', async () => {
    const count = 2 * LIST_PAGE_SIZE + 7;
    for (let i = 0; i < count; i++) {
      double.objects.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `paged-${String(i).padStart(4, '0')}`, namespace: 'team-b', labels: { paged: 'yes' } },
        type: 'Opaque',
        data: { key: Buffer.from(`v${i}`).toString('base64') },
      });
    }
    const sa = join(dir, 'serviceaccount');
    await mkdir(sa);
    await writeFile(join(sa, 'token'), double.token);
    await writeFile(join(sa, 'ca.crt'), double.ca);
    await writeFile(join(sa, 'namespace'), 'team-b');
    const { client } = await listSecrets({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port() }, sa);
    const before = double.requests.length;
    const items = await client.list<{ metadata: { name: string } }>('/api/v1/namespaces/team-b/secrets', { labelSelector: 'paged=yes' });
    expect(items.map((s) => s.metadata.name)).toEqual(Array.from({ length: count }, (_, i) => `paged-${String(i).padStart(4, '0')}`));
    const pages = double.requests.slice(before);
    expect(pages.map((r) => r.query.limit)).toEqual(['500', '500', '500']);
    expect(pages.map((r) => r.query.labelSelector)).toEqual(['paged=yes', 'paged=yes', 'paged=yes']);
    expect(pages[0]!.query.continue).toBeUndefined();
    expect(pages[2]!.query.continue).toBeDefined();
  });
});
