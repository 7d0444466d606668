import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';

import type { TokenServiceClient } from '../../src/api/token-service-client.js';
import { type Clock, fixedClock } from '../../src/clock.js';
import { BUILT_IN_DEFAULTS, DEFAULT_SCHEDULE } from '../../src/config/load-policy.js';
import type { TokenPolicy } from '../../src/config/types.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { RotationSettings } from '../../src/policy/rotation-settings.js';
import { type Failpoint, type RotationDeps, SimulatedCrash } from '../../src/rotation/deps.js';
import type { SinkConfig } from '../../src/sinks/registry.js';
import type { SinkSet } from '../../src/sinks/sink-set.js';
import type { NameLocks } from '../../src/state/name-locks.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import { FakeTokenService } from './fake-token-service.js';
import { memorySink, MemorySinkStore } from './memory-sink.js';
import { type MemoryStateBackend, MemoryStateStorage } from './memory-state-backend.js';

/** Log lines as the product writes them (redaction and scrubbing included), kept for leak checks. */
export interface LogCapture {
  logger: Logger;
  lines: string[];
  text(): string;
}

export function captureLogs(level = 'trace'): LogCapture {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines, text: () => lines.join('') };
}

export const silentLogger = (): Logger => createLogger({ level: 'silent' });

/** A state key, as ROTATOR_STATE_KEY gives one: staged secrets are sealed with it. */
export const newStateKey = (): KeyObject => createSecretKey(randomBytes(32));

/** Where a simulated process dies: the `nth` time (1 by default) it reaches `step`. */
export interface CrashPlan {
  step: Failpoint;
  nth?: number;
}

export interface FakeDepsOptions {
  backend: StateBackend;
  api: TokenServiceClient;
  sinks: SinkSet<SinkConfig>;
  clock: Clock;
  /** Silent when absent. */
  logger?: Logger;
  stateKey?: KeyObject;
  /** ROTATOR_STATE_KEY_PREVIOUS: keys that only open what they sealed. */
  previousStateKeys?: KeyObject[];
  crashAt?: CrashPlan;
  /**
   * What becomes of the name's lock when the process dies at `crashAt`: `left` (the default, as a
   * real crash leaves it: the next process must take it over once the test says its holder is
   * gone), or `released` (as `rotateToken`'s `finally` does when a SimulatedCrash goes through it).
   */
  lockOnCrash?: 'left' | 'released';
}

/** What the simulated process did, for assertions. */
export interface ProcessTrace {
  /** Every protocol step reached, in order (the one it died at included). */
  readonly steps: Failpoint[];
  /** Whether it died at its failpoint. */
  readonly crashed: boolean;
  /** Side effects tried after it died: a dead process has none, so this stays empty. */
  readonly afterCrash: string[];
}

export type FakeDeps = RotationDeps & { process: ProcessTrace };

/**
 * RotationDeps for one simulated process, over a backend view, a fake service and sinks. Its
 * failpoint throws SimulatedCrash at `crashAt`; from then on the process is dead: its lock is left
 * (or released, as asked), and any other side effect it still tried is refused and noted.
 */
export function fakeDeps(options: FakeDepsOptions): FakeDeps {
  const trace = { steps: [] as Failpoint[], crashed: false, afterCrash: [] as string[] };
  let reached = 0;
  const alive = (what: string) => {
    if (!trace.crashed) return;
    trace.afterCrash.push(what);
    throw new Error(`${what} after the simulated crash: a dead process does nothing`);
  };
  const guard = <T extends object>(target: T, what: string): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value: unknown = Reflect.get(object, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          alive(`${what}.${String(key)}`);
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });

  const locks: NameLocks = {
    async acquire(name, waitOptions) {
      alive('locks.acquire');
      const result = await options.backend.locks.acquire(name, waitOptions);
      if ('busy' in result) return result;
      const { held } = result;
      return {
        held: {
          assertHeld: () => {
            alive('lock.assertHeld');
            return held.assertHeld();
          },
          release: async () => {
            if (trace.crashed && options.lockOnCrash !== 'released') return;
            await held.release();
          },
        },
      };
    },
  };

  return {
    api: guard(options.api, 'api'),
    state: guard(options.backend.state, 'state'),
    journal: guard(options.backend.journal, 'journal'),
    locks,
    clock: options.clock,
    logger: options.logger ?? silentLogger(),
    sinks: guard(options.sinks, 'sinks'),
    stateKey: options.stateKey,
    previousStateKeys: options.previousStateKeys ?? [],
    failpoint: (step) => {
      alive(`failpoint ${step}`);
      trace.steps.push(step);
      const plan = options.crashAt;
      if (plan && plan.step === step && ++reached >= (plan.nth ?? 1)) {
        trace.crashed = true;
        throw new SimulatedCrash(step);
      }
    },
    process: trace,
  };
}

/** A policy for one name, with the built-in settings but for `settings`. */
export function testPolicy(input: { name: string; id: string; sinks: SinkConfig[]; settings?: Partial<RotationSettings> }): TokenPolicy {
  return {
    name: input.name,
    id: input.id,
    settings: { ...BUILT_IN_DEFAULTS, ...input.settings },
    schedule: DEFAULT_SCHEDULE,
    sinks: input.sinks,
    reload: [],
    reloadAt: 'defaults.reload',
  };
}

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;

/**
 * Everything a run touches, in memory, outliving the simulated processes that run over it: the
 * service, the sinks' destinations, the state storage, a fixed clock and the log of every process.
 */
export function openWorld(now: Date | string = '2026-11-22T12:00:00.000Z') {
  const clock = fixedClock(now);
  const service = new FakeTokenService(clock);
  const destinations = new MemorySinkStore();
  const storage = new MemoryStateStorage(clock);
  const logs = captureLogs();
  const at = (offsetMs: number) => new Date(clock.now().getTime() + offsetMs);

  return {
    clock,
    service,
    destinations,
    storage,
    logs,
    /** A time relative to the clock's now. */
    at,
    /** A token at the service, and the policy of a name for it with a memory sink per key. */
    token(
      name: string,
      input: { expiresInMs?: number | null; sinks?: string[]; settings?: Partial<RotationSettings> } = {},
    ): { id: string; secret: string; policy: TokenPolicy } {
      const expiresInMs = input.expiresInMs === undefined ? DAY : input.expiresInMs;
      const token = service.add({ name, expiresAt: expiresInMs === null ? null : at(expiresInMs) });
      const sinks = (input.sinks ?? [`${name}-a`, `${name}-b`]).map(memorySink);
      return { id: token.id, secret: token.secret, policy: testPolicy({ name, id: token.id, sinks, settings: input.settings }) };
    },
    /** A new simulated process: its own view of the storage, its own sink clients, the shared log. */
    process(options: Partial<Omit<FakeDepsOptions, 'backend'>> & { backend?: MemoryStateBackend } = {}): FakeDeps & {
      view: MemoryStateBackend;
    } {
      const view = options.backend ?? storage.open();
      const deps = fakeDeps({
        api: service,
        sinks: destinations.open(logs.logger),
        clock,
        logger: logs.logger,
        ...options,
        backend: view,
      });
      return Object.assign(deps, { view });
    },
  };
}

export type World = ReturnType<typeof openWorld>;
