import { KubernetesError } from '../../errors.js';
import { kubernetesClient } from '../../kubernetes/client.js';
import type { ReloadOutcome } from '../../rotation/outcome.js';
import type { Reloader, ReloadOpenContext } from '../reload.js';
import { describeRollout, type RolloutReloadConfig, rolloutTarget, selectorText, type WorkloadKind } from './rollout-config.js';

/** The pod-template annotation a restart sets; `kubectl rollout restart` sets its own beside it. */
export const RESTARTED_AT_ANNOTATION = 'token-rotator.io/restartedAt';

const RESOURCE: Record<WorkloadKind, string> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

interface Workload {
  metadata?: { name?: string; namespace?: string };
  spec?: { paused?: boolean };
}

export function rolloutReloader(context: ReloadOpenContext): Reloader<RolloutReloadConfig> {
  const api = () => kubernetesClient(context.env, context.logger);
  const collection = (config: RolloutReloadConfig) =>
    `/apis/apps/v1/namespaces/${encodeURIComponent(config.namespace)}/${RESOURCE[config.kind]}`;

  async function restart(config: RolloutReloadConfig, name: string, signal: AbortSignal | undefined): Promise<ReloadOutcome> {
    const target = rolloutTarget(config.kind, config.namespace, name);
    const path = `${collection(config)}/${encodeURIComponent(name)}`;
    try {
      const client = await api();
      const workload = await client.get<Workload>(path, { signal });
      if (!workload) return { target, result: 'failed', message: `${target} does not exist` };
      if (workload.spec?.paused) {
        // A paused Deployment takes the template change but rolls nothing out: say so rather than pretend.
        context.logger.warn({ target }, 'not restarted: the Deployment is paused (kubectl rollout resume, and it will roll out)');
        return { target, result: 'skipped', message: 'paused' };
      }
      const restartedAt = context.clock
        .now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
      await client.patch(
        path,
        { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } } },
        'strategic',
        { signal },
      );
      context.logger.info({ target, restartedAt }, 'restarted');
      return { target, result: 'restarted' };
    } catch (error) {
      return { target, result: 'failed', message: (error as Error).message };
    }
  }

  return {
    async preflight(config, { signal }) {
      const client = await api();
      const names =
        'name' in config.workload
          ? [config.workload.name]
          : (await client.list<Workload>(collection(config), { labelSelector: selectorText(config.workload.selector), signal })).flatMap(
              (w) => (w.metadata?.name ? [w.metadata.name] : []),
            );
      if (names.length === 0) throw new KubernetesError(`no ${config.kind} in ${config.namespace} matches ${describeRollout(config)}`);
      for (const name of names) {
        const path = `${collection(config)}/${encodeURIComponent(name)}`;
        if (!(await client.get<Workload>(path, { signal })))
          throw new KubernetesError(`${config.kind} ${config.namespace}/${name} does not exist`);
        // The very patch a restart sends, as a dry run: authorized and validated, stored nowhere.
        await client.patch(
          path,
          { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: 'preflight' } } } } },
          'strategic',
          {
            dryRun: true,
            signal,
          },
        );
      }
    },

    async reload(config, _token, run) {
      if ('name' in config.workload) {
        const { name } = config.workload;
        return [await run.once(`rollout ${config.kind} ${config.namespace}/${name}`, () => restart(config, name, run.signal))];
      }
      const selector = selectorText(config.workload.selector);
      let names: string[];
      try {
        const items = await (await api()).list<Workload>(collection(config), { labelSelector: selector, signal: run.signal });
        names = items.flatMap((item) => (item.metadata?.name ? [item.metadata.name] : []));
      } catch (error) {
        const message = error instanceof KubernetesError ? error.message : String((error as Error)?.message ?? error);
        return [{ target: `${config.kind}s ${config.namespace} ${selector}`, result: 'failed', message }];
      }
      if (names.length === 0) {
        return [
          {
            target: `${config.kind}s ${config.namespace} ${selector}`,
            result: 'failed',
            message: `no ${config.kind} in ${config.namespace} matches ${selector}`,
          },
        ];
      }
      return Promise.all(
        names.map((name) => run.once(`rollout ${config.kind} ${config.namespace}/${name}`, () => restart(config, name, run.signal))),
      );
    },
  };
}
