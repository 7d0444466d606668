import type { JournalEntry } from './journal-entry.js';
import type { StateBackend } from './state-backend.js';
import type { StateRecord } from './state-record.js';

/**
 * The backend, reading every sink target it holds (a record's `sinks` keys, an entry's `delivered`
 * marks) in today's form, as `upgrade` gives it: a target whose form changed (an AWS secret once
 * named by its whole ARN) still names the sink it named when it was written, so a delivered sink is
 * not written again and a recorded one stays ours. What is written next carries the new form.
 * Authentication of what is read, where there is any, happens inside the backend, before this.
 */
export function withUpgradedTargets(backend: StateBackend, upgrade: (stored: string) => string): StateBackend {
  return {
    ...backend,
    state: { ...backend.state, read: async (name) => upgradeRecord(await backend.state.read(name), upgrade) },
    journal: { ...backend.journal, read: async (name) => upgradeEntry(await backend.journal.read(name), upgrade) },
  };
}

function upgradeRecord(record: StateRecord | undefined, upgrade: (stored: string) => string): StateRecord | undefined {
  if (!record?.sinks) return record;
  return { ...record, sinks: Object.fromEntries(Object.entries(record.sinks).map(([target, given]) => [upgrade(target), given])) };
}

function upgradeEntry(entry: JournalEntry | undefined, upgrade: (stored: string) => string): JournalEntry | undefined {
  return entry && { ...entry, delivered: [...new Set(entry.delivered.map(upgrade))] };
}
