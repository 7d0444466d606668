import { expect } from 'vitest';

import type { TokenPolicy } from '../../src/config/types.js';
import { type Failpoint, SimulatedCrash } from '../../src/rotation/deps.js';
import type { HeldLock, LockResult } from '../../src/state/name-locks.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import type { StateRecord } from '../../src/state/state-record.js';
import { type FakeTokenService, SECRET_CANARY } from './fake-token-service.js';
import type { MemorySinkConfig, MemorySinkStore } from './memory-sink.js';

/** The held lock of an acquisition that must have succeeded. */
export async function mustHold(result: Promise<LockResult> | LockResult): Promise<HeldLock> {
  const lock = await result;
  if (!('held' in lock)) throw new Error(`expected the lock to be held, found it busy (${JSON.stringify(lock.busy)})`);
  return lock.held;
}

/**
 * A run that must die by its failpoint at `step`: a set-up for the next run to resume from. Any other
 * end (a real failure, a crash at another step, no crash at all) fails the test here, rather than
 * leaving the next run to resume from a state nobody meant.
 */
export async function crashedAt(run: Promise<unknown>, step: Failpoint): Promise<void> {
  const settled = await run.then(
    (value) => ({ crashed: false as const, value }),
    (error: unknown) => ({ crashed: true as const, error }),
  );
  if (!settled.crashed) expect.fail(`expected a simulated crash at ${step}, but the run ended with ${JSON.stringify(settled.value)}`);
  expect(settled.error).toBeInstanceOf(SimulatedCrash);
  expect(settled.error).toMatchObject({ step });
}

/** The keys of a policy's memory sinks. */
export const sinkKeys = (policy: TokenPolicy): string[] => policy.sinks.map((s) => (s as unknown as MemorySinkConfig).key);

/**
 * The end state the protocol promises: no journal entry, the state's current id is `currentId` (by
 * default the token the last committed regenerate made), it works, and every sink holds its
 * secret. Returns the record.
 */
export async function expectSettled(
  world: { service: FakeTokenService; destinations: MemorySinkStore },
  backend: StateBackend,
  policy: TokenPolicy,
  currentId?: string,
): Promise<StateRecord> {
  const { service, destinations } = world;
  expect(await backend.journal.read(policy.name), 'no journal entry is left').toBeUndefined();
  const record = await backend.state.read(policy.name);
  const last = currentId ?? service.committed().at(-1)?.newId ?? policy.id;
  expect(record?.currentId, 'the state names the last token the service minted').toBe(last);
  const secret = service.token(last)?.secret;
  expect(service.works(secret), 'the current token works').toBe(true);
  for (const key of sinkKeys(policy)) expect(destinations.secret(key), `${key} holds the current secret`).toBe(secret);
  return record!;
}

/** No secret the service ever minted, nor the canary every such secret carries, is in `text`. */
export function expectNoSecretIn(text: string, service: FakeTokenService): void {
  expect(text.length, 'a leak check needs something to look at').toBeGreaterThan(0);
  for (const secret of service.secrets()) expect(text.includes(secret), 'a secret leaked into the log').toBe(false);
  expect(text).not.toContain(SECRET_CANARY);
}

/** Table rows keyed by their `case`, a sentence: `it.each(named(rows))('%s', (_case, row) => …)` shows it whole. */
export const named = <T extends { case: string }>(rows: readonly T[]): Array<readonly [string, T]> =>
  rows.map((row) => [row.case, row] as const);
