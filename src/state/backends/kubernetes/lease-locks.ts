import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import type { ILease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';

import type { Clock } from '../../../clock.js';
import { KubernetesError, LockLostError, StateError } from '../../../errors.js';
import type { KubernetesClient } from '../../../kubernetes/client.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../kubernetes/names.js';
import { leaseObjectName, ROLE_LABEL, TOKEN_NAME_ANNOTATION } from '../../../kubernetes/rotator-objects.js';
import type { Logger } from '../../../log/logger.js';
import type { HeldLock, LockHolder, NameLocks } from '../../name-locks.js';
import {
  acquiredSpec,
  DEFAULT_LEASE_TIMING,
  isExpired,
  isFree,
  type LeaseTiming,
  type Observation,
  observe,
  releasedSpec,
  renewedSpec,
  waitDeadline,
} from './lease-rules.js';

export { leaseObjectName };

export interface LeaseLockOptions {
  clock: Clock;
  logger: Logger;
  timing?: LeaseTiming;
  /** Who we are in `holderIdentity`; a test plays several processes with it. */
  identity?: () => string;
}

/** The pod's name (a pod's host name) or the host, and the pid; a nonce tells two acquisitions of one process apart. */
const defaultIdentity = () => `${hostname()}_${process.pid}_${randomBytes(4).toString('hex')}`;

/**
 * One `coordination.k8s.io/v1` Lease per name, with client-go's leader election semantics: taken
 * when free or expired (unchanged for its duration as this process observed it), renewed every
 * retry period while held, given up as lost when it could not be renewed within the renew deadline,
 * and released (no holder) at the end. Every write is conditional on the resourceVersion read, so
 * of two processes taking one Lease, one gets a 409 and goes back to waiting.
 */
export function leaseNameLocks(api: KubernetesClient, namespace: string, options: LeaseLockOptions): NameLocks {
  const timing = options.timing ?? DEFAULT_LEASE_TIMING;
  const identityOf = options.identity ?? defaultIdentity;
  const now = () => options.clock.now().getTime();
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const pathOf = (name: string) => `${collection}/${leaseObjectName(name)}`;

  async function tryTake(name: string, identity: string, lease: ILease | undefined): Promise<ILease | undefined> {
    try {
      if (!lease) {
        return await api.create<ILease>(collection, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: leaseObjectName(name),
            namespace,
            labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: 'lock' },
            annotations: { [TOKEN_NAME_ANNOTATION]: name },
          },
          spec: acquiredSpec(undefined, identity, options.clock.now(), timing),
        });
      }
      return await api.replace<ILease>(pathOf(name), { ...lease, spec: acquiredSpec(lease.spec, identity, options.clock.now(), timing) });
    } catch (error) {
      if (error instanceof KubernetesError && error.status === 409) return undefined; // another process was quicker
      throw error;
    }
  }

  function hold(name: string, identity: string, taken: ILease): HeldLock {
    let lease = taken;
    let renewedAt = now();
    let lost: string | undefined;
    let renewing: Promise<void> = Promise.resolve();

    /** One renewal at a time; a conflict means someone else holds it now, anything else is retried until the deadline. */
    const renew = () =>
      (renewing = renewing.then(async () => {
        if (lost) return;
        try {
          lease = await api.replace<ILease>(pathOf(name), { ...lease, spec: renewedSpec(lease.spec ?? {}, options.clock.now()) });
          renewedAt = now();
        } catch (error) {
          if (error instanceof KubernetesError && error.status === 409) {
            const current = await api.get<ILease>(pathOf(name)).catch(() => undefined);
            if (current?.spec?.holderIdentity === identity) {
              lease = current; // only its metadata moved; renew on top of it next time
              return;
            }
            lost = current?.spec?.holderIdentity ? `${current.spec.holderIdentity} holds it now` : 'it was released by someone else';
          } else if (now() - renewedAt > timing.renewDeadlineMs) {
            lost = `it could not be renewed for ${Math.round((now() - renewedAt) / 1000)} s (${(error as Error).message})`;
          }
        }
      }));

    const timer = setInterval(() => void renew(), timing.retryPeriodMs);
    timer.unref();

    return {
      async assertHeld() {
        await renew();
        if (lost || now() - renewedAt > timing.renewDeadlineMs) {
          throw new LockLostError(
            `lost the Lease ${namespace}/${leaseObjectName(name)} on "${name}": ${lost ?? 'it could not be renewed within the renew deadline'}; this process stops here, without side effects`,
          );
        }
      },
      async release() {
        clearInterval(timer);
        await renewing;
        if (lost) return;
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            await api.replace(pathOf(name), { ...lease, spec: releasedSpec(lease.spec ?? {}, options.clock.now()) });
            return;
          } catch (error) {
            const current = await api.get<ILease>(pathOf(name)).catch(() => undefined);
            if (current?.spec?.holderIdentity !== identity) return; // never another holder's
            if (!(error instanceof KubernetesError && error.status === 409)) {
              // It expires by itself: nobody waits longer than its duration.
              options.logger.warn(
                { tokenName: name, lease: leaseObjectName(name), err: error },
                'could not release the Lease; it expires by itself',
              );
              return;
            }
            lease = current;
          }
        }
      },
    };
  }

  return {
    async acquire(name, { waitMs }) {
      const identity = identityOf();
      const startedAt = now();
      let observation: Observation | undefined;
      for (;;) {
        let lease: ILease | undefined;
        try {
          lease = await api.get<ILease>(pathOf(name));
        } catch (error) {
          throw new StateError(`cannot read the Lease ${namespace}/${leaseObjectName(name)}: ${(error as Error).message}`, {
            cause: error,
          });
        }
        observation = observe(observation, lease?.spec, now());
        if (!lease || isFree(lease.spec) || isExpired(lease.spec, observation, now(), timing)) {
          const taken = await tryTake(name, identity, lease).catch((error: unknown) => {
            throw new StateError(`cannot take the Lease ${namespace}/${leaseObjectName(name)}: ${(error as Error).message}`, {
              cause: error,
            });
          });
          if (taken) return { held: hold(name, identity, taken) };
          continue;
        }
        if (now() >= waitDeadline(startedAt, waitMs, lease.spec, observation, timing)) return { busy: holderOf(lease) };
        await sleep(timing.retryPeriodMs);
      }
    },
  };
}

function holderOf(lease: ILease): LockHolder | undefined {
  const who = lease.spec?.holderIdentity;
  return who
    ? { who: `${who} (Lease ${lease.metadata?.namespace}/${lease.metadata?.name})`, since: lease.spec?.acquireTime ?? 'unknown' }
    : undefined;
}
