import { describe, expect, it } from 'vitest';

import { StateError } from '../../src/errors.js';
import type { DriftFinding } from '../../src/policy/sink-drift.js';
import { strayStatus, tokenStatus, unreadableStatus } from '../../src/rotation/token-status.js';
import { JOURNAL_VERSION, type JournalEntry } from '../../src/state/journal-entry.js';
import { STATE_VERSION, type StateRecord } from '../../src/state/state-record.js';
import { DAY, testPolicy } from '../fakes/fake-deps.js';
import { memorySink, type MemorySinkConfig } from '../fakes/memory-sink.js';

const now = new Date('2026-11-22T12:00:00.000Z');
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();
const policy = testPolicy({ name: 'ingest', id: 'tok-0', sinks: [memorySink('a'), memorySink('b')] });
const sinks = {
  describe: (config: unknown) => `memory ${(config as MemorySinkConfig).key}`,
  target: (config: unknown) => `memory:${(config as MemorySinkConfig).key}`,
};

const record = (overrides: Partial<StateRecord> = {}): StateRecord => ({
  version: STATE_VERSION,
  name: 'ingest',
  currentId: 'tok-1',
  expiresAt: at(30 * DAY),
  adoptedId: 'tok-0',
  adoptedAt: at(-60 * DAY),
  lastRotatedAt: at(-DAY),
  consecutiveFailures: 0,
  lastFailure: null,
  serviceClock: null,
  lineage: [{ id: 'tok-0', replacedAt: at(-DAY), expiresAt: at(-DAY + 3600_000) }],
  ...overrides,
});

const intent: JournalEntry = {
  version: JOURNAL_VERSION,
  name: 'ingest',
  rotationId: 'r1',
  phase: 'intent',
  reason: 'due',
  startedAt: at(-3600_000),
  oldId: 'tok-1',
  oldExpiresAt: at(30 * DAY),
  existingTokenExpiresAt: at(2 * 3600_000),
  newTokenExpiresAt: null,
  delivered: [],
};
const staged = (extra: Partial<Extract<JournalEntry, { phase: 'staged' }>> = {}): JournalEntry => ({
  ...intent,
  phase: 'staged',
  staged: { newId: 'tok-2', newExpiresAt: null, stagedAt: at(-3000_000), secret: { plain: 'xaat-c4n4ry-status' } },
  ...extra,
});

describe('status of a name, from what is on disk', () => {
  it('a name never run: the policy’s id, nothing known, nothing pending', () => {
    expect(tokenStatus(policy, undefined, undefined, now, sinks)).toEqual({
      name: 'ingest',
      currentId: 'tok-0',
      expiresAt: null,
      lastRotatedAt: null,
      nextDueAt: null,
      pending: [],
      consecutiveFailures: 0,
      backoffUntil: null,
      lastError: null,
      serviceClockOffsetMs: null,
      drift: [],
    });
  });

  it('a rotated name: its current id, expiry, last rotation, and when it is next due (renewBefore ahead of expiry)', () => {
    expect(tokenStatus(policy, record(), undefined, now, sinks)).toEqual({
      name: 'ingest',
      currentId: 'tok-1',
      expiresAt: at(30 * DAY),
      lastRotatedAt: at(-DAY),
      nextDueAt: at(23 * DAY),
      pending: [],
      consecutiveFailures: 0,
      backoffUntil: null,
      lastError: null,
      serviceClockOffsetMs: null,
      drift: [],
    });
  });

  it('a token that never expires is next due at maxAge after its last rotation', () => {
    const status = tokenStatus(policy, record({ expiresAt: null }), undefined, now, sinks);
    expect(status.expiresAt).toBeNull();
    expect(status.nextDueAt).toBe(at(-DAY + 90 * DAY));
  });

  it('the drift found by reading the sinks back is reported as given', () => {
    const drift: DriftFinding[] = [{ target: 'memory:b', sink: 'memory b', kind: 'missing' }];
    expect(tokenStatus(policy, record(), undefined, now, sinks, drift).drift).toEqual(drift);
    expect(tokenStatus(policy, undefined, undefined, now, sinks, drift).drift).toEqual(drift);
  });

  it('failures: the count, the last error, and until when scheduled checks back off', () => {
    const lastFailure = { at: at(-30_000), code: 'API_ERROR', message: 'service said 503' };
    const status = tokenStatus(policy, record({ consecutiveFailures: 1, lastFailure }), undefined, now, sinks);
    expect(status).toMatchObject({ consecutiveFailures: 1, lastError: lastFailure, backoffUntil: at(30_000) });
  });

  it('a back-off that is over is not shown; the moment it ends counts as over, as the scheduler counts it', () => {
    const over = { at: at(-120_000), code: 'API_ERROR', message: 'x' };
    expect(tokenStatus(policy, record({ consecutiveFailures: 1, lastFailure: over }), undefined, now, sinks).backoffUntil).toBeNull();
    const endingNow = { at: at(-60_000), code: 'API_ERROR', message: 'x' };
    expect(tokenStatus(policy, record({ consecutiveFailures: 1, lastFailure: endingNow }), undefined, now, sinks).backoffUntil).toBeNull();
  });

  it('a failure followed by a success: the old error is not shown', () => {
    const lastFailure = { at: at(-DAY), code: 'API_ERROR', message: 'long ago' };
    expect(tokenStatus(policy, record({ consecutiveFailures: 0, lastFailure }), undefined, now, sinks).lastError).toBeNull();
  });

  it('back-off is judged on the service’s clock: with the service 40 s ahead, a back-off ending in 30 s is over', () => {
    const lastFailure = { at: at(-30_000), code: 'API_ERROR', message: 'x' };
    const serviceClock = { offsetMs: 40_000, measuredAt: at(-60_000) };
    const status = tokenStatus(policy, record({ consecutiveFailures: 1, lastFailure, serviceClock }), undefined, now, sinks);
    expect(status.backoffUntil).toBeNull();
    expect(status.serviceClockOffsetMs).toBe(40_000);
    // And 20 s ahead, it still runs.
    const behind = { offsetMs: 20_000, measuredAt: at(-60_000) };
    expect(
      tokenStatus(policy, record({ consecutiveFailures: 1, lastFailure, serviceClock: behind }), undefined, now, sinks).backoffUntil,
    ).toBe(at(30_000));
  });

  it('a staged rotation: the sinks still waiting for its secret are pending', () => {
    const entry = staged({ delivered: ['memory:a'] });
    expect(tokenStatus(policy, record(), entry, now, sinks).pending).toEqual(['memory b']);
    expect(tokenStatus(policy, undefined, staged(), now, sinks).pending).toEqual(['memory a', 'memory b']);
  });

  it('a staged rotation delivered everywhere but not verified: pending says the old token’s deadline and the failed check', () => {
    const entry = staged({
      delivered: ['memory:a', 'memory:b'],
      verifyFailed: { check: 'probe', message: 'probe answered 401', at: at(-60_000) },
    });
    const [line, ...rest] = tokenStatus(policy, record(), entry, now, sinks).pending;
    expect(rest).toEqual([]);
    expect(line).toContain(intent.existingTokenExpiresAt);
    expect(line).toContain('tok-2');
    expect(line).toContain('probe');
    expect(line).toContain('probe answered 401');
  });

  it('an intent: a regenerate with no known outcome is pending, naming the old id and when it was sent', () => {
    const [line, ...rest] = tokenStatus(policy, record(), intent, now, sinks).pending;
    expect(rest).toEqual([]);
    expect(line).toContain('tok-1');
    expect(line).toContain(intent.startedAt);
  });

  it('a held secret: pending says it is delivered nowhere, and why', () => {
    const held: JournalEntry = {
      ...intent,
      phase: 'held',
      held: { problem: 'no id in the answer', heldAt: at(0), secret: { plain: 'x' } },
    };
    const [line, ...rest] = tokenStatus(policy, record(), held, now, sinks).pending;
    expect(rest).toEqual([]);
    expect(line).toContain('no id in the answer');
  });
});

describe('status lines for what cannot be read, and for names that left the policy', () => {
  it('an unreadable state: the policy’s id and the error, with its code', () => {
    expect(unreadableStatus(policy, new StateError('tokens/ingest is damaged'))).toEqual({
      name: 'ingest',
      currentId: 'tok-0',
      expiresAt: null,
      lastRotatedAt: null,
      nextDueAt: null,
      pending: [],
      consecutiveFailures: 0,
      backoffUntil: null,
      lastError: { at: '', code: StateError.code, message: 'tokens/ingest is damaged' },
      serviceClockOffsetMs: null,
      drift: [],
    });
  });

  it('a stray journal entry: its name, no id, and the message as what is pending', () => {
    expect(strayStatus({ name: 'gone', message: 'an unfinished rotation of gone' })).toEqual({
      name: 'gone',
      currentId: '-',
      expiresAt: null,
      lastRotatedAt: null,
      nextDueAt: null,
      pending: ['an unfinished rotation of gone'],
      consecutiveFailures: 0,
      backoffUntil: null,
      lastError: null,
      serviceClockOffsetMs: null,
      drift: [],
    });
  });
});
