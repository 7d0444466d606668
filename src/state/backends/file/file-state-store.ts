import { join } from 'node:path';

import type { RecordKind } from '../../record-codec.js';
import { STATE_VERSION, type StateRecord, stateRecordSchema } from '../../state-record.js';
import type { StateStore } from '../../state-store.js';
import { readRecordFile, removeRecordFile, writeRecordFile } from './record-file.js';

const kind: RecordKind<StateRecord> = { what: 'state file', version: STATE_VERSION, schema: stateRecordSchema };

/**
 * One JSON file per name under `<dir>/tokens/`, 0600 in 0700 folders, each written atomically.
 * Token names are restricted by the policy schema to characters that are safe as file names.
 */
export function fileStateStore(dir: string): StateStore {
  const fileOf = (name: string) => join(dir, 'tokens', `${name}.json`);
  return {
    describe: () => dir,
    // A damaged record must stop the run for this name: silently starting over would forget the
    // current id and make the next run regenerate from a token that no longer exists.
    read: (name) =>
      readRecordFile(fileOf(name), name, kind, `restore it from a backup, or move it aside to adopt '${name}' again from the policy's id`),
    write: (record) => writeRecordFile(fileOf(record.name), record, kind.what),
    erase: (name) => removeRecordFile(fileOf(name), kind.what),
  };
}
