import { randomUUID } from 'node:crypto';

import { type Clock, systemClock } from '../../src/clock.js';
import { LockLostError } from '../../src/errors.js';
import type { Journal } from '../../src/state/journal.js';
import { JOURNAL_VERSION, type JournalEntry, journalEntrySchema } from '../../src/state/journal-entry.js';
import type { HeldLock, NameLocks } from '../../src/state/name-locks.js';
import { decodeRecord, encodeRecord, type RecordKind } from '../../src/state/record-codec.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import { STATE_VERSION, type StateRecord, stateRecordSchema } from '../../src/state/state-record.js';
import type { StateStore } from '../../src/state/state-store.js';

const stateKind: RecordKind<StateRecord> = { what: 'state record', version: STATE_VERSION, schema: stateRecordSchema };
const journalKind: RecordKind<JournalEntry> = { what: 'journal entry', version: JOURNAL_VERSION, schema: journalEntrySchema };

export type RawKind = 'state' | 'journal';

interface MemoryLock {
  /** The simulated process holding it. */
  process: string;
  /** One per acquisition: "is this still my lock" compares it, as the file lock's nonce. */
  nonce: string;
  since: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const POLL_MS = 5;

/**
 * What a memory backend keeps, shared by every process that opens a view on it: records and journal
 * entries as the text the shared codec makes of them (so that what would not survive the file
 * backend does not survive here either), and the per-name locks, each held by a simulated process.
 */
export class MemoryStateStorage {
  readonly #text: Record<RawKind, Map<string, string>> = { state: new Map(), journal: new Map() };
  readonly #locks = new Map<string, MemoryLock>();
  readonly #gone = new Set<string>();
  readonly #processOf = new WeakMap<StateBackend, string>();
  #opened = 0;

  /** `clock` dates the locks (their `since`); waiting for a lock is in real time. */
  constructor(readonly clock: Clock = systemClock) {}

  /** A view for one more simulated process, with its own identity (`process 1`, `process 2`…). */
  open(): MemoryStateBackend {
    const process = `process ${++this.#opened}`;
    const view: MemoryStateBackend = {
      process,
      describe: () => `memory (seen by ${process})`,
      state: this.#stateStore(),
      journal: this.#journal(),
      locks: this.#nameLocks(process),
    };
    this.#processOf.set(view, process);
    return view;
  }

  /**
   * The process behind `view` is gone (crashed, killed, or judged gone, as a stopped process on
   * another host is once its lock is stale): its locks may be taken over. If it still runs, it
   * finds out by `assertHeld` once another took its lock.
   */
  crash(view: StateBackend | string): void {
    const process = typeof view === 'string' ? view : this.#processOf.get(view);
    if (!process) throw new Error('not a view of this memory storage');
    this.#gone.add(process);
  }

  /** Text where a record lives, as a damaged disk, an older tool or a hand edit leaves it. */
  writeRaw(kind: RawKind, name: string, text: string): void {
    this.#text[kind].set(name, text);
  }

  readRaw(kind: RawKind, name: string): string | undefined {
    return this.#text[kind].get(name);
  }

  /** Who holds a name's lock now, if anyone. */
  holderOf(name: string): string | undefined {
    return this.#locks.get(name)?.process;
  }

  #stateStore(): StateStore {
    const records = this.#text.state;
    return {
      describe: () => 'memory',
      read: async (name) => {
        const text = records.get(name);
        return text === undefined
          ? undefined
          : decodeRecord(text, name, stateKind, `memory:tokens/${name}`, `restore it, or remove it to adopt '${name}' again`);
      },
      write: async (record) => {
        records.set(record.name, encodeRecord(record));
      },
      erase: async (name) => {
        records.delete(name);
      },
    };
  }

  #journal(): Journal {
    const entries = this.#text.journal;
    const describe = (name: string) => `memory:journal/${name}`;
    return {
      describe,
      read: async (name) => {
        const text = entries.get(name);
        return text === undefined
          ? undefined
          : decodeRecord(text, name, journalKind, describe(name), `it may hold the only copy of a new secret for '${name}'`);
      },
      write: async (entry) => {
        entries.set(entry.name, encodeRecord(entry));
      },
      erase: async (name) => {
        entries.delete(name);
      },
      // Writes here are whole or not at all: a crash leaves nothing beside an entry.
      removeLeftovers: async () => undefined,
      names: async () => [...entries.keys()],
    };
  }

  #nameLocks(process: string): NameLocks {
    return {
      acquire: async (name, { waitMs }) => {
        const deadline = Date.now() + waitMs;
        for (;;) {
          const current = this.#locks.get(name);
          if (!current || this.#gone.has(current.process)) {
            const lock: MemoryLock = { process, nonce: randomUUID(), since: this.clock.now().toISOString() };
            this.#locks.set(name, lock);
            return { held: this.#held(name, lock) };
          }
          if (Date.now() >= deadline) return { busy: { who: current.process, since: current.since } };
          await sleep(POLL_MS);
        }
      },
    };
  }

  #held(name: string, lock: MemoryLock): HeldLock {
    return {
      assertHeld: async () => {
        const current = this.#locks.get(name);
        if (current?.nonce === lock.nonce) return;
        const holder = current ? `${current.process} has held it since ${current.since}` : 'nobody holds it';
        throw new LockLostError(`lost the lock on "${name}": ${holder}; this process stops here, without side effects`);
      },
      release: async () => {
        if (this.#locks.get(name)?.nonce === lock.nonce) this.#locks.delete(name);
      },
    };
  }
}

/** One simulated process's view of a MemoryStateStorage. */
export interface MemoryStateBackend extends StateBackend {
  readonly process: string;
}
