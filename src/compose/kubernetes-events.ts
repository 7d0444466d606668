import type { Clock } from '../clock.js';
import type { Env } from '../common/env-variables.js';
import type { Policy } from '../config/types.js';
import type { EventRecorder } from '../kubernetes/events/event-recorder.js';
import type { Logger } from '../log/logger.js';
import { eventsForOutcome, recordsEvents } from '../notify/kubernetes-events.js';
import type { Notify } from '../notify/notifier.js';

/**
 * The Event recorder of a process, or undefined when `ROTATOR_KUBERNETES_EVENTS=off`. The recorder
 * and the Kubernetes client load, and the client opens, on the first Event: a policy without
 * Kubernetes never loads them (an idle daemon holds every module it loaded) nor connects for them.
 * One per process: a daemon keeps its series across policy reloads.
 */
export function openEventRecorder(
  settings: { kubernetesEvents: boolean },
  context: { env: Env; logger: Logger; clock: Clock },
): EventRecorder | undefined {
  if (!settings.kubernetesEvents) return undefined;
  let recorder: Promise<EventRecorder> | undefined;
  return {
    async record(intent) {
      recorder ??= loadEventRecorder(context);
      await (await recorder).record(intent);
    },
  };
}

async function loadEventRecorder(context: { env: Env; logger: Logger; clock: Clock }): Promise<EventRecorder> {
  const [{ createEventRecorder }, { kubernetesClient }] = await Promise.all([
    import('../kubernetes/events/event-recorder.js'),
    import('../kubernetes/client.js'),
  ]);
  return createEventRecorder({ client: () => kubernetesClient(context.env, context.logger), logger: context.logger, clock: context.clock });
}

/**
 * `notify`, and beside it the Kubernetes Events of each outcome on the Secrets and workloads of
 * its token (see eventsForOutcome). Both come after the outcome is final: an Event can neither
 * fail a rotation nor hold it up for more than the recorder's bounded wait.
 */
export function withKubernetesEvents(notify: Notify, policy: Policy, recorder: EventRecorder | undefined): Notify {
  if (!recorder || !recordsEvents(policy.tokens)) return notify;
  const tokens = new Map(policy.tokens.map((t) => [t.name, t]));
  return async (outcome, at) => {
    const token = tokens.get(outcome.name);
    const events = token ? eventsForOutcome(outcome, token) : [];
    await Promise.all([notify(outcome, at), ...events.map((intent) => recorder.record(intent))]);
  };
}
