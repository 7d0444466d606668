import { hostname } from 'node:os';

import type { Clock } from '../../clock.js';
import { KubernetesError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { KubernetesClient } from '../client.js';
import { EventSeriesCache, REPORTING_INSTANCE_LENGTH_LIMIT, type SeriesStep } from './event-series.js';
import type { EventIntent, ObjectReference } from './event-types.js';

/** How long one Event may hold up what records it: Events are best effort, a rotation is not. */
export const EVENT_WAIT_MS = 5_000;

export interface EventRecorder {
  /** Never throws, and gives up after EVENT_WAIT_MS: a refused or lost Event is logged, not a failure. */
  record(intent: EventIntent): Promise<void>;
}

export interface EventRecorderOptions {
  client: () => Promise<KubernetesClient>;
  logger: Logger;
  clock: Clock;
  /** The pod's (or machine's) name, as client-go's recorders use. */
  reportingInstance?: string;
  waitMs?: number;
}

const eventsPath = (namespace: string) => `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;

/** The API path of the object an Event is about: the kinds token-rotator touches are plural by an `s`. */
function objectPath(ref: ObjectReference): string {
  const prefix = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
  return `${prefix}/namespaces/${encodeURIComponent(ref.namespace)}/${ref.kind.toLowerCase()}s/${encodeURIComponent(ref.name)}`;
}

/**
 * Records events.k8s.io/v1 Events as client-go's recorder (k8s.io/client-go/tools/events) does:
 * reporting controller `token-rotator`, the instance its host name, repeats folded into a series
 * that is patched (strategic merge of `series`) instead of a new Event each time, and a patch of
 * an Event that is gone turned into a create. Unlike client-go, nothing is retried later: a run may
 * end right after, and the next occurrence records again.
 */
export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const instance = (options.reportingInstance ?? hostname()).slice(0, REPORTING_INSTANCE_LENGTH_LIMIT) || 'token-rotator';
  const series = new EventSeriesCache(instance);
  const waitMs = options.waitMs ?? EVENT_WAIT_MS;
  const warned = new Set<string>();
  /** One request at a time per Event: a series' patch must not overtake the create of its Event. */
  const inFlight = new Map<string, Promise<void>>();

  async function send(step: SeriesStep, signal: AbortSignal): Promise<void> {
    const api = await options.client();
    const { namespace, name } = step.event.metadata;
    if (step.kind === 'patch') {
      try {
        await api.patch(`${eventsPath(namespace)}/${encodeURIComponent(name)}`, step.patch, 'strategic', { signal });
        return;
      } catch (error) {
        if (!(error instanceof KubernetesError && error.status === 404)) throw error;
      }
    }
    await api.create(eventsPath(namespace), step.event, { signal });
  }

  /** `timedOut`: the bounded wait ran out (got words that as an abort of its own). */
  function report(intent: EventIntent, error: unknown, timedOut: boolean): void {
    const status = error instanceof KubernetesError ? error.status : undefined;
    const kind = timedOut ? 'timeout' : String(status ?? 'network');
    const key = `${intent.regarding.namespace}:${kind}`;
    const fields = {
      namespace: intent.regarding.namespace,
      reason: intent.reason,
      regarding: `${intent.regarding.kind}/${intent.regarding.name}`,
    };
    const message =
      status === 403
        ? `Kubernetes Event not recorded: token-rotator may not create events (events.k8s.io) in ${intent.regarding.namespace}; grant create and patch on them (see token-rotator rbac), or set ROTATOR_KUBERNETES_EVENTS=off`
        : kind === 'timeout'
          ? `Kubernetes Event not recorded: no answer within ${waitMs} ms`
          : `Kubernetes Event not recorded: ${(error as Error)?.message ?? String(error)}`;
    // Said once per namespace and kind of failure, then quietly: a missing grant would otherwise warn at every rotation.
    if (warned.has(key)) options.logger.debug(fields, message);
    else {
      warned.add(key);
      options.logger.warn(fields, message);
    }
  }

  /**
   * The regarding object with its uid, as client-go's reference to an object has it: `kubectl
   * describe` lists an object's Events by kind, name and uid. Read by name (the rotator may get
   * each object it writes or restarts); without it, the Event is recorded all the same.
   */
  async function withUid(intent: EventIntent, signal: AbortSignal): Promise<EventIntent> {
    try {
      const object = await (await options.client()).get<{ metadata?: { uid?: string } }>(objectPath(intent.regarding), { signal });
      const uid = object?.metadata?.uid;
      return uid ? { ...intent, regarding: { ...intent.regarding, uid } } : intent;
    } catch {
      return intent;
    }
  }

  return {
    async record(given) {
      const signal = AbortSignal.timeout(waitMs);
      const intent = await withUid(given, signal);
      const step = series.next(intent, options.clock.now());
      if (step.kind === 'create' && intent.note !== step.event.note)
        options.logger.debug({ reason: intent.reason }, 'Event note cut to 1024 characters');
      const key = `${step.event.metadata.namespace}/${step.event.metadata.name}`;
      const previous = inFlight.get(key) ?? Promise.resolve();
      const current = previous.then(async () => {
        try {
          await send(step, signal);
        } catch (error) {
          // Lost: the next occurrence starts a new Event rather than patching one that may not exist.
          if (step.kind === 'create') series.forget(intent);
          report(intent, error, signal.aborted);
        }
      });
      inFlight.set(key, current);
      await current;
      if (inFlight.get(key) === current) inFlight.delete(key);
    },
  };
}
