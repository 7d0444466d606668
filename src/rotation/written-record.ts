import type { StateRecord } from '../state/state-record.js';
import type { StateStore } from '../state/state-store.js';

/**
 * The state store as one rotation of a name uses it, under the name's lock, remembering the last
 * record it wrote there: while the lock is held, a read gives that record back, so what only needs
 * it (the failure count after a success) need not read, parse and authenticate it again.
 * Forgotten when a write or an erase fails or is under way: what is stored is then not known.
 */
export function rememberingWrites(state: StateStore): { state: StateStore; lastWritten: () => StateRecord | undefined } {
  let last: StateRecord | undefined;
  return {
    state: {
      describe: () => state.describe(),
      read: (name) => state.read(name),
      async write(record) {
        last = undefined;
        await state.write(record);
        last = record;
      },
      async erase(name) {
        last = undefined;
        await state.erase(name);
      },
    },
    lastWritten: () => last,
  };
}
