import type { StateRecord } from './state-record.js';

/** Where each name's lineage lives between runs. */
export interface StateStore {
  /** Where it is, for messages. */
  describe(): string;
  read(name: string): Promise<StateRecord | undefined>;
  write(record: StateRecord): Promise<void>;
  /**
   * Removes a name's record, read or not (a damaged one too): `state forget`, under the name's lock.
   * Nothing there is fine.
   */
  erase(name: string): Promise<void>;
}
