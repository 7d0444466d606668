import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { LockLostError, StateError } from '../../src/errors.js';
import { SimulatedCrash } from '../../src/rotation/deps.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { sealContext } from '../../src/rotation/seal-context.js';
import { Secret } from '../../src/secret.js';
import { type HeldEntry, type IntentEntry, JOURNAL_VERSION, type StagedEntry } from '../../src/state/journal-entry.js';
import { encodeRecord } from '../../src/state/record-codec.js';
import { sealSecret } from '../../src/state/secret-box.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import { STATE_VERSION, type StateRecord } from '../../src/state/state-record.js';
import { expectNoSecretIn, mustHold } from '../fakes/expectations.js';
import { captureLogs, DAY, fakeDeps, newStateKey, testPolicy } from '../fakes/fake-deps.js';
import { FakeTokenService, SECRET_CANARY } from '../fakes/fake-token-service.js';
import { memorySink, MemorySinkStore } from '../fakes/memory-sink.js';

/** Where a backend keeps a name's record (`state`) or its journal entry (`journal`). */
export type RawKind = 'state' | 'journal';

/** A backend over fresh, empty storage, with what the contract needs to play processes and damage. */
export interface BackendHarness {
  /** The first simulated process's view. */
  backend: StateBackend;
  /** Another simulated process's view onto the same storage (its own lock identity). */
  openView(): Promise<StateBackend>;
  /**
   * The process behind `view` is gone, as a crash (or, for a stopped process, being judged gone)
   * leaves it: its locks may now be taken over. It is not told: if it still runs, it finds out by
   * `assertHeld`. How this is simulated is the backend's business.
   */
  crash(view: StateBackend): Promise<void>;
  /** Puts `text` where the backend keeps the record or entry of `name`: damage, another version, a hand edit. */
  writeRaw(kind: RawKind, name: string, text: string): Promise<void>;
  /** What is stored there now, as text; undefined when nothing is. */
  readRaw(kind: RawKind, name: string): Promise<string | undefined>;
  close?(): Promise<void>;
}

const T0 = '2026-11-22T12:00:00.000Z';
const T1 = '2026-11-22T13:00:00.000Z';
const T30 = '2026-12-22T12:00:00.000Z';

function aRecord(name: string, over: Partial<StateRecord> = {}): StateRecord {
  return {
    version: STATE_VERSION,
    name,
    currentId: 'tok-2',
    expiresAt: T30,
    adoptedId: 'tok-1',
    adoptedAt: '2026-10-01T00:00:00.000Z',
    lastRotatedAt: T0,
    consecutiveFailures: 2,
    lastFailure: { at: T0, code: 'ERR_API', message: 'the service answered 503' },
    serviceClock: { offsetMs: -1200, measuredAt: T0 },
    sinks: { 'memory:a': { fingerprint: 'hmac-sha256:abc', at: T0, how: 'delivered' } },
    lineage: [{ id: 'tok-1', replacedAt: T0, expiresAt: T1 }],
    ...over,
  };
}

function anIntent(name: string): IntentEntry {
  return {
    version: JOURNAL_VERSION,
    name,
    rotationId: 'rotation-1',
    phase: 'intent',
    reason: 'expires in 1d, within renewBefore 7d',
    startedAt: T0,
    oldId: 'tok-1',
    oldExpiresAt: '2026-11-23T12:00:00.000Z',
    existingTokenExpiresAt: T1,
    newTokenExpiresAt: T30,
    delivered: [],
  };
}

function aStaged(name: string, sealed: boolean): StagedEntry {
  const secret = new Secret(`xaat-${SECRET_CANARY}-staged-for-${name}`);
  return {
    ...anIntent(name),
    phase: 'staged',
    delivered: ['memory:a'],
    staged: {
      newId: 'tok-2',
      newExpiresAt: T30,
      stagedAt: T0,
      secret: sealSecret(secret, sealed ? newStateKey() : undefined, sealContext(name, 'tok-2')),
    },
  };
}

function aHeld(name: string): HeldEntry {
  return {
    ...anIntent(name),
    phase: 'held',
    held: { problem: 'its id "a/b" must not contain "/"', heldAt: T0, secret: { plain: `xaat-${SECRET_CANARY}-held` } },
  };
}

/** What a store must refuse to read as a record of `alpha`, whatever it stores; `idField` holds a token id. */
const refused = (valid: object, idField: string): Array<[string, string]> => [
  ['a record of another name', encodeRecord({ ...valid, name: 'beta' })],
  ['a record of a newer version', encodeRecord({ ...valid, version: 99 })],
  ['a record of a damaged shape', encodeRecord({ version: 1, name: 'alpha' })],
  ['a record with a token id that would address another resource', encodeRecord({ ...valid, [idField]: '../admin' })],
  ['truncated text', encodeRecord(valid).slice(0, 40)],
];

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/**
 * What every StateBackend must do, through the interface only: records, journal and locks, and the
 * protocol's crash safety over it (a crash at each step, resumed by another process).
 */
export function stateBackendContract(name: string, open: () => Promise<BackendHarness>): void {
  describe(`the ${name} state backend keeps the StateBackend contract`, () => {
    let h: BackendHarness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(async () => {
      await h.close?.();
    });

    describe('records', () => {
      it('a name without a record reads as undefined', async () => {
        expect(await h.backend.state.read('alpha')).toBeUndefined();
      });

      it('a record written reads back equal, and another process reads it too', async () => {
        await h.backend.state.write(aRecord('alpha'));
        expect(await h.backend.state.read('alpha')).toEqual(aRecord('alpha'));
        expect(await (await h.openView()).state.read('alpha')).toEqual(aRecord('alpha'));
        expect(await h.backend.state.read('beta')).toBeUndefined();
      });

      it('a record written again replaces the one before', async () => {
        await h.backend.state.write(aRecord('alpha'));
        await h.backend.state.write(aRecord('alpha', { currentId: 'tok-3', sinks: undefined, lineage: [] }));
        const read = await h.backend.state.read('alpha');
        expect(read).toMatchObject({ currentId: 'tok-3', lineage: [] });
        expect(read).not.toHaveProperty('sinks');
      });

      it("erase removes one name's record only, for every process; erasing nothing is fine", async () => {
        await h.backend.state.write(aRecord('alpha'));
        await h.backend.state.write(aRecord('beta'));
        await h.backend.journal.write(anIntent('alpha'));
        await h.backend.state.erase('alpha');
        expect(await h.backend.state.read('alpha')).toBeUndefined();
        expect(await (await h.openView()).state.read('alpha')).toBeUndefined();
        expect(await h.readRaw('state', 'alpha')).toBeUndefined();
        expect(await h.backend.state.read('beta')).toEqual(aRecord('beta'));
        expect(await h.backend.journal.read('alpha'), 'the journal entry is not the record').toEqual(anIntent('alpha'));
        await expect(h.backend.state.erase('alpha')).resolves.toBeUndefined();
        await expect(h.backend.state.erase('nothing')).resolves.toBeUndefined();
      });

      it('erase removes a record that cannot be read, left as it was by every read', async () => {
        await h.writeRaw('state', 'alpha', 'not json');
        await h.backend.state.erase('alpha');
        expect(await h.readRaw('state', 'alpha')).toBeUndefined();
        expect(await h.backend.state.read('alpha')).toBeUndefined();
      });

      it('a record and journal entry both erased leave nothing of the name', async () => {
        await h.backend.state.write(aRecord('alpha'));
        await h.backend.journal.write(anIntent('alpha'));
        await h.backend.journal.erase('alpha');
        await h.backend.state.erase('alpha');
        expect(await h.readRaw('state', 'alpha')).toBeUndefined();
        expect(await h.readRaw('journal', 'alpha')).toBeUndefined();
        expect(await h.backend.journal.names()).toEqual([]);
        await h.backend.state.write(aRecord('alpha', { currentId: 'tok-9' }));
        expect(await h.backend.state.read('alpha')).toMatchObject({ currentId: 'tok-9' });
      });

      it('describe says where the state lives', () => {
        expect(h.backend.describe()).toMatch(/\S/);
        expect(h.backend.state.describe()).toMatch(/\S/);
      });

      it.each(refused(aRecord('alpha'), 'currentId'))('%s is refused with a StateError, and left as it was', async (_what, text) => {
        await h.writeRaw('state', 'alpha', text);
        const error = await rejection(h.backend.state.read('alpha'));
        expect(error).toBeInstanceOf(StateError);
        expect(error).toMatchObject({ code: 'ERR_STATE', message: expect.stringContaining('alpha') });
        expect(await h.readRaw('state', 'alpha')).toBe(text);
      });
    });

    describe('journal', () => {
      it('a name without an entry reads as undefined, and no names are listed', async () => {
        expect(await h.backend.journal.read('alpha')).toBeUndefined();
        expect(await h.backend.journal.names()).toEqual([]);
      });

      it.each([
        ['an intent', anIntent('alpha')],
        ['a staged entry with a plain secret', aStaged('alpha', false)],
        ['a staged entry with a sealed secret', aStaged('alpha', true)],
        ['a held secret', aHeld('alpha')],
      ])('%s reads back equal, in this process and another', async (_what, entry) => {
        await h.backend.journal.write(entry);
        expect(await h.backend.journal.read('alpha')).toEqual(entry);
        expect(await (await h.openView()).journal.read('alpha')).toEqual(entry);
      });

      it('each write of a name replaces its entry, one entry per name', async () => {
        await h.backend.journal.write(anIntent('alpha'));
        await h.backend.journal.write(aStaged('alpha', false));
        expect(await h.backend.journal.read('alpha')).toMatchObject({ phase: 'staged' });
        expect(await h.backend.journal.names()).toEqual(['alpha']);
      });

      it('names lists every name with an entry, and erase removes one entry only', async () => {
        await h.backend.journal.write(anIntent('alpha'));
        await h.backend.journal.write(aStaged('beta', true));
        expect((await h.backend.journal.names()).sort()).toEqual(['alpha', 'beta']);
        await h.backend.journal.erase('alpha');
        expect(await h.backend.journal.read('alpha')).toBeUndefined();
        expect(await h.backend.journal.read('beta')).toMatchObject({ phase: 'staged' });
        expect(await h.backend.journal.names()).toEqual(['beta']);
      });

      it('erasing an entry that is not there is fine, and so is removing leftovers of a name', async () => {
        await expect(h.backend.journal.erase('nothing')).resolves.toBeUndefined();
        await expect(h.backend.journal.removeLeftovers('nothing')).resolves.toBeUndefined();
        await h.backend.journal.write(anIntent('alpha'));
        await h.backend.journal.removeLeftovers('alpha');
        expect(await h.backend.journal.read('alpha')).toEqual(anIntent('alpha'));
      });

      it('describe names where the entry of a name lives', () => {
        expect(h.backend.journal.describe('alpha')).toContain('alpha');
      });

      it.each(refused(anIntent('alpha'), 'oldId'))('%s is refused with a StateError, and left as it was', async (_what, text) => {
        await h.writeRaw('journal', 'alpha', text);
        const error = await rejection(h.backend.journal.read('alpha'));
        expect(error).toBeInstanceOf(StateError);
        expect(error).toMatchObject({ code: 'ERR_STATE', message: expect.stringContaining('alpha') });
        expect(await h.readRaw('journal', 'alpha')).toBe(text);
      });
    });

    describe('locks', () => {
      it('a free name is held; another process finds it busy, told who holds it and since when', async () => {
        await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        const other = await h.openView();
        const result = await other.locks.acquire('alpha', { waitMs: 0 });
        expect(result).toEqual({ busy: { who: expect.stringMatching(/\S/), since: expect.any(String) } });
        expect(Number.isNaN(Date.parse((result as { busy: { since: string } }).busy.since))).toBe(false);
      });

      it('a name is held once even within one process', async () => {
        await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        expect(await h.backend.locks.acquire('alpha', { waitMs: 0 })).toHaveProperty('busy');
      });

      it('names are locked independently', async () => {
        await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        await mustHold((await h.openView()).locks.acquire('beta', { waitMs: 0 }));
      });

      it('a released name is free for another process, and releasing twice is harmless', async () => {
        const lock = await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        await lock.release();
        await lock.release();
        await mustHold((await h.openView()).locks.acquire('alpha', { waitMs: 0 }));
      });

      it('a process waiting for a name gets it when the holder releases it within the wait', async () => {
        const lock = await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        const waiting = (await h.openView()).locks.acquire('alpha', { waitMs: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, 100));
        await lock.release();
        await mustHold(waiting);
      });

      it('a live holder keeps its lock through another process waiting for it', async () => {
        await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        expect(await (await h.openView()).locks.acquire('alpha', { waitMs: 150 })).toHaveProperty('busy');
      });

      it('once its holder is gone, another process takes the lock over', async () => {
        await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        const other = await h.openView();
        expect(await other.locks.acquire('alpha', { waitMs: 0 })).toHaveProperty('busy');
        await h.crash(h.backend);
        await mustHold(other.locks.acquire('alpha', { waitMs: 0 }));
      });

      it('assertHeld passes while held, and throws LockLostError after another process took the lock over', async () => {
        const first = await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        await expect(first.assertHeld()).resolves.toBeUndefined();
        await h.crash(h.backend);
        const second = await mustHold((await h.openView()).locks.acquire('alpha', { waitMs: 0 }));
        const lost = await rejection(first.assertHeld());
        expect(lost).toBeInstanceOf(LockLostError);
        expect(lost).toMatchObject({ code: 'ERR_LOCK_LOST', message: expect.stringContaining('alpha') });
        await expect(second.assertHeld()).resolves.toBeUndefined();
      });

      it("a process that lost its lock never releases the new holder's", async () => {
        const first = await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        await h.crash(h.backend);
        const second = await mustHold((await h.openView()).locks.acquire('alpha', { waitMs: 0 }));
        await first.release();
        await expect(second.assertHeld()).resolves.toBeUndefined();
        expect(await (await h.openView()).locks.acquire('alpha', { waitMs: 0 })).toHaveProperty('busy');
      });

      it('assertHeld throws LockLostError once the lock was released', async () => {
        const lock = await mustHold(h.backend.locks.acquire('alpha', { waitMs: 0 }));
        await lock.release();
        await expect(lock.assertHeld()).rejects.toBeInstanceOf(LockLostError);
      });
    });

    describe('a crash at each step of the protocol, resumed by another process', () => {
      const cases = [
        { step: 'intent', committed: 1, orphans: 0, note: 'before regenerate was sent: reconciled as nothing moved, then sent once' },
        { step: 'regenerated', committed: 2, orphans: 1, note: 'the answer existed only in the dead process: the orphan is reported' },
        { step: 'staged', committed: 1, orphans: 0, note: 'the staged secret is delivered without regenerating' },
        { step: 'delivered', committed: 1, orphans: 0, note: 'the second sink gets the secret the first one has' },
        { step: 'committed', committed: 1, orphans: 0, note: 'the commit recognises itself and the entry is erased' },
      ] as const;
      const locks = ['left for the next process to take over', 'released'] as const;
      const sinks = ['sinks that keep the token id beside the secret', 'sinks that keep the secret alone'] as const;
      const table = cases.flatMap((c) => [
        ...locks.map((lock) => ({ ...c, lock, sinks: sinks[0] })),
        { ...c, lock: locks[0], sinks: sinks[1] },
      ]);
      /**
       * PRODUCT BUG (see the report: "first rotation interrupted after a sink"): on a name's first
       * rotation, a crash after one sink got the secret leaves no state record; the next run takes
       * the current id from that sink's metadata (the new id), so commitRotation judges the commit
       * done and never writes the record, while it erases the journal entry.
       */

      const run = async ({ step, committed, orphans, lock, sinks: kind }: (typeof table)[number]) => {
        const clock = fixedClock(T0);
        const service = new FakeTokenService(clock);
        const original = service.add({ name: 'ingest', expiresAt: new Date(clock.now().getTime() + DAY) });
        const destinations = new MemorySinkStore({ keepsMeta: kind === sinks[0] });
        const logs = captureLogs();
        const stateKey = newStateKey();
        const policy = testPolicy({ name: 'ingest', id: original.id, sinks: [memorySink('ingest-a'), memorySink('ingest-b')] });
        const runAs = (backend: StateBackend, crash?: typeof step) =>
          fakeDeps({
            backend,
            api: service,
            sinks: destinations.open(logs.logger),
            clock,
            logger: logs.logger,
            stateKey,
            ...(crash ? { crashAt: { step: crash } } : {}),
            lockOnCrash: lock === 'released' ? 'released' : 'left',
          });

        const dying = runAs(h.backend, step);
        const crash = await rejection(rotateToken(policy, dying, { lockWaitMs: 0 }));
        expect(crash).toBeInstanceOf(SimulatedCrash);
        expect(crash).toMatchObject({ step });
        expect(dying.process.afterCrash).toEqual([]);
        if (step === 'staged') {
          // Where the backend keeps one document per name, as stored; else (the file backend's log) as read back.
          const stored = (await h.readRaw('journal', 'ingest')) ?? encodeRecord(await h.backend.journal.read('ingest'));
          expect(stored, 'the staged secret is in the journal').toMatch(/"phase": "staged"/);
          expect(stored, 'sealed with the state key, never in plain text').not.toContain(SECRET_CANARY);
          expect(stored, 'sealed with the state key, never in plain text').not.toMatch(/"plain"/);
        }
        await h.crash(h.backend);

        const resumed = runAs(await h.openView());
        const outcome = await rotateToken(policy, resumed, { lockWaitMs: 0 });
        expect(outcome, JSON.stringify(outcome)).toMatchObject({ action: 'rotated' });
        expect(outcome.orphans).toHaveLength(orphans);
        if (orphans > 0) expect(outcome.orphans[0]).toMatchObject({ oldId: original.id });
        expect(logs.text().match(/ORPHANED TOKEN/g) ?? []).toHaveLength(orphans);
        if (step === 'intent') expect(logs.text()).toMatch(/did not take effect; sending it again is safe/);
        // Past the intent, the next process only finishes: it never regenerates.
        if (step !== 'intent' && step !== 'regenerated') expect(resumed.process.steps).not.toContain('intent');

        // The service acted exactly as often as it had to, every time on the original token.
        expect(service.committed()).toHaveLength(committed);
        expect(service.committed(original.id)).toHaveLength(committed);
        const current = service.committed().at(-1)!.newId!;
        const record = await resumed.state.read('ingest');
        expect(outcome.newId).toBe(current);
        for (const key of ['ingest-a', 'ingest-b']) {
          expect(destinations.secret(key), `${key} holds the current token's secret`).toBe(service.token(current)!.secret);
        }
        expect(service.works(destinations.secret('ingest-a'))).toBe(true);
        expect(await resumed.journal.names()).toEqual([]);
        expect(await resumed.journal.read('ingest')).toBeUndefined();
        expectNoSecretIn(logs.text(), service);

        // The lock was given back, and a third process finds nothing to do.
        const third = runAs(await h.openView());
        expect(await rotateToken(policy, third, { lockWaitMs: 0 })).toMatchObject({ action: 'skipped', check: 'notDue' });
        expect(service.committed()).toHaveLength(committed);

        expect(record, 'the resumed run recorded the new id in the state').toMatchObject({
          currentId: current,
          consecutiveFailures: 0,
          lineage: [expect.objectContaining({ id: original.id, expiresAt: outcome.existingTokenExpiresAt })],
        });
      };
      const titled = (rows: typeof table) =>
        rows.map(
          (row) => [`crashed at ${row.step} (${row.note}), its lock ${row.lock}, with ${row.sinks}: the name ends committed`, row] as const,
        );
      it.each(titled(table))('%s', (_title, row) => run(row));
    });
  });
}
