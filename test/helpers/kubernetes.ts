import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { type KubernetesDouble, startKubernetesDouble } from 'token-rotator-kubernetes-double';
import { afterAll, beforeAll } from 'vitest';

import { type CliFixture, useCliFixture } from './cli-fixture.js';
import { makeTempDir } from './temp-dir.js';

/**
 * The Kubernetes API double with a kubeconfig for it in `dir` (0600: it holds the bearer), and the
 * environment that makes token-rotator (and kubectl) use it and nothing else.
 */
export async function kubernetesHere(dir: string, options: { namespaces?: string[]; namespace?: string; user?: string } = {}) {
  const double = await startKubernetesDouble({
    namespaces: options.namespaces ?? ['apps', 'token-rotator'],
    ...(options.user ? { user: options.user } : {}),
  });
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, double.kubeconfig({ namespace: options.namespace ?? 'token-rotator' }), { mode: 0o600 });
  return { double, kubeconfig, env: { KUBECONFIG: kubeconfig, HOME: dir } };
}

export type KubernetesHere = Awaited<ReturnType<typeof kubernetesHere>>;

/** A Secret's data key, decoded; undefined when the Secret or the key is missing. */
export function secretData(double: KubernetesDouble, namespace: string, name: string, key: string): string | undefined {
  const data = (double.objects.get('secrets', namespace, name)?.data ?? {}) as Record<string, string>;
  return data[key] === undefined ? undefined : Buffer.from(data[key], 'base64').toString('utf8');
}

/** A Deployment as `kubectl create deployment` would leave it, to be restarted. */
export function seedDeployment(
  double: KubernetesDouble,
  namespace: string,
  name: string,
  extra: { paused?: boolean; labels?: Record<string, string> } = {},
) {
  const labels = { app: name, ...extra.labels };
  return double.objects.put({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      ...(extra.paused ? { paused: true } : {}),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'example/app:1' }] } },
    },
  });
}

/** The pod-template annotation a rollout reload sets; undefined when never restarted. */
export function restartedAt(double: KubernetesDouble, namespace: string, name: string, resource = 'deployments'): string | undefined {
  const object = double.objects.get(resource, namespace, name) as
    { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } } | undefined;
  return object?.spec?.template?.metadata?.annotations?.['token-rotator.io/restartedAt'];
}

/** A state namespace of its own (as each cluster has its own state), and the environment that keeps the state there. */
export function kubernetesStateEnv(k: KubernetesHere, namespace: string): Record<string, string> {
  k.double.objects.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return { ...k.env, ROTATOR_STATE_BACKEND: 'kubernetes', ROTATOR_STATE_NAMESPACE: namespace, ROTATOR_LEASE_DURATION: '3s' };
}

/**
 * One API double for a test file, started before its tests and closed after them: the returned
 * object is filled in when it has started, so tests use it as `k.double`, `k.env`.
 */
export function useKubernetesDouble(options: Parameters<typeof kubernetesHere>[1] = {}): KubernetesHere {
  const here = {} as KubernetesHere;
  beforeAll(async () => {
    Object.assign(here, await kubernetesHere(await makeTempDir(), options));
  });
  afterAll(async () => {
    await here.double?.close();
  });
  return here;
}

/**
 * The CLI fixture with the state in the API double, in a namespace of its own per test (as each
 * cluster has its own state): `stateNamespace` is the current test's.
 */
export function useKubernetesStateCli(k: KubernetesHere, prefix: string): CliFixture & { stateNamespace: string } {
  let count = 0;
  const fx = useCliFixture({
    env: () => {
      fixture.stateNamespace = `${prefix}-${++count}`;
      return kubernetesStateEnv(k, fixture.stateNamespace);
    },
  });
  const fixture = Object.assign(fx, { stateNamespace: '' });
  return fixture;
}
