import type { ISecret } from 'kubernetes-models/v1/Secret';

import { KubernetesError, StateError } from '../../../errors.js';
import type { KubernetesClient } from '../../../kubernetes/client.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../kubernetes/names.js';
import { ROLE_LABEL, stateObjectName, TOKEN_NAME_ANNOTATION } from '../../../kubernetes/rotator-objects.js';
import type { Journal } from '../../journal.js';
import { JOURNAL_VERSION, type JournalEntry, journalEntrySchema } from '../../journal-entry.js';
import { decodeRecord, encodeRecord, type RecordKind } from '../../record-codec.js';
import { STATE_VERSION, type StateRecord, stateRecordSchema } from '../../state-record.js';
import type { StateStore } from '../../state-store.js';
import { journalIndex } from './journal-index.js';

export { ROLE_LABEL, stateObjectName, TOKEN_NAME_ANNOTATION };

/** The two keys of a name's state Secret. */
type Key = 'record' | 'journal';

const recordKind: RecordKind<StateRecord> = { what: 'state record', version: STATE_VERSION, schema: stateRecordSchema };
const journalKind: RecordKind<JournalEntry> = { what: 'journal entry', version: JOURNAL_VERSION, schema: journalEntrySchema };

/** How many times a write is retried when only the Secret's metadata moved under it (a label added by hand). */
const METADATA_RETRIES = 3;

/**
 * One Secret per token name, holding its record and its journal entry under two keys, in the
 * codec every backend shares. Every write is conditional on the resourceVersion this process last
 * saw (a PUT, or a DELETE with a precondition): when the Secret moved, it is read again, and the
 * write goes on only if its data is still what this process saw; otherwise it stops with a
 * StateError. Another writer's record is never overwritten.
 */
export function kubernetesStateObjects(api: KubernetesClient, namespace: string): { state: StateStore; journal: Journal } {
  /** The Secret as last seen, per name: null when seen absent, no entry when never looked at. */
  const seen = new Map<string, ISecret | null>();
  const pathOf = (name: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${stateObjectName(name)}`;
  const where = (name: string, key: Key) => `Secret ${namespace}/${stateObjectName(name)} (key ${key})`;

  async function load(name: string): Promise<ISecret | null> {
    const object = await guarded(`cannot read the state of '${name}' from ${where(name, 'record')}`, () => api.get<ISecret>(pathOf(name)));
    if (object) checkOwner(name, object);
    seen.set(name, object ?? null);
    return object ?? null;
  }

  async function readKey(name: string, key: Key): Promise<string | undefined> {
    const object = await load(name);
    const data = object?.data?.[key];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
  }

  async function writeKey(name: string, key: Key, text: string | undefined): Promise<void> {
    let known = seen.has(name) ? seen.get(name)! : await load(name);
    for (let attempt = 0; ; attempt++) {
      try {
        known = await putKey(name, known, key, text);
        seen.set(name, known);
        return;
      } catch (error) {
        // 409: the resourceVersion moved; 404: the Secret went away under us. Either way, look again.
        if (!(error instanceof KubernetesError) || (error.status !== 409 && error.status !== 404)) {
          throw new StateError(`cannot write ${where(name, key)}: ${(error as Error).message}`, { cause: error });
        }
        const fresh = await load(name);
        if (attempt >= METADATA_RETRIES || !sameData(known, fresh)) {
          throw new StateError(
            `not writing ${where(name, key)}: it changed since this process read it (another token-rotator, or a hand edit); ` +
              `its state was left as the other writer made it. Run again to act on the current state`,
          );
        }
        known = fresh; // only its metadata moved: write again on top of it
      }
    }
  }

  /** One conditional write from what was last seen; the object as the server answered (null: deleted). */
  async function putKey(name: string, known: ISecret | null, key: Key, text: string | undefined): Promise<ISecret | null> {
    const data: Record<string, string> = { ...known?.data };
    if (text === undefined) delete data[key];
    else data[key] = Buffer.from(text, 'utf8').toString('base64');
    if (!known) {
      if (text === undefined) return null;
      return api.create<ISecret>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`, newObject(name, data));
    }
    if (Object.keys(data).length === 0) {
      await api.delete(pathOf(name), { resourceVersion: known.metadata!.resourceVersion! });
      return null;
    }
    return api.replace<ISecret>(pathOf(name), { ...known, data });
  }

  function newObject(name: string, data: Record<string, string>): ISecret {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: stateObjectName(name),
        namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: 'state' },
        annotations: { [TOKEN_NAME_ANNOTATION]: name },
      },
      type: 'Opaque',
      data,
    };
  }

  const decode = <T extends { name: string }>(name: string, key: Key, kind: RecordKind<T>, fix: string) =>
    readKey(name, key).then((text) => (text === undefined ? undefined : decodeRecord(text, name, kind, where(name, key), fix)));

  const state: StateStore = {
    describe: () => `Secrets token-rotator-state-* in namespace ${namespace}`,
    read: (name) =>
      decode(
        name,
        'record',
        recordKind,
        `restore the Secret from a backup, or delete its "record" key to adopt '${name}' again from the policy's id`,
      ),
    write: (record) => writeKey(record.name, 'record', encodeRecord(record)),
    // The Secret goes with its last key, as when a journal entry is erased.
    erase: (name) => writeKey(name, 'record', undefined),
  };

  const index = journalIndex(api, namespace);

  const journal: Journal = {
    describe: (name) => where(name, 'journal'),
    // The entry may hold the only copy of a new secret: never drop it, say what to look at.
    read: (name) =>
      decode(
        name,
        'journal',
        journalKind,
        `it may hold the only copy of a new secret for '${name}'. Inspect it (kubectl get secret -o jsonpath='{.data.journal}' | base64 -d); ` +
          `if it holds a "staged" secret, put that secret where it belongs by hand. Then remove the "journal" key to let '${name}' rotate again`,
      ),
    async write(entry) {
      // Listed before its first entry exists, so that no entry is ever missing from the index.
      const known = seen.has(entry.name) ? seen.get(entry.name)! : await load(entry.name);
      if (known?.data?.journal === undefined) await index.add(entry.name);
      await writeKey(entry.name, 'journal', encodeRecord(entry));
    },
    async erase(name) {
      await writeKey(name, 'journal', undefined);
      await index.remove(name);
    },
    // A write to the API server is whole or nothing: no crash leaves a half-written entry beside it.
    removeLeftovers: async () => undefined,
    // The names the index lists whose object holds an entry, each read by its name: no LIST.
    async names() {
      const listed = await index.names();
      const found = await Promise.all(
        listed.map(async (name) => {
          try {
            return (await load(name))?.data?.journal === undefined ? [] : [name];
          } catch {
            return [name]; // unreadable (damaged, another's, forbidden): said as such by whoever reads it next
          }
        }),
      );
      return found.flat();
    },
  };

  return { state, journal };
}

/** The object name carries a hash of the token name; the annotation must agree, or it is not this name's. */
function checkOwner(name: string, object: ISecret): void {
  const owner = object.metadata?.annotations?.[TOKEN_NAME_ANNOTATION];
  if (owner !== name) {
    throw new StateError(
      `Secret ${object.metadata?.namespace}/${object.metadata?.name} is not the state of '${name}' (its ${TOKEN_NAME_ANNOTATION} annotation is ${JSON.stringify(owner ?? null)}), ` +
        `so nothing was read from it or written to it. Do not delete it: its "journal" key may hold the only copy of a new secret of '${name}'. ` +
        `Check what wrote it (kubectl get secret -n ${object.metadata?.namespace} ${object.metadata?.name} -o yaml): a sink of another token, ` +
        `or a hand edit. Remove that sink from the policy, put the annotation back (kubectl annotate --overwrite secret -n ${object.metadata?.namespace} ` +
        `${object.metadata?.name} ${TOKEN_NAME_ANNOTATION}=${name}), and remove any key other than "record" and "journal"`,
    );
  }
}

function sameData(a: ISecret | null, b: ISecret | null): boolean {
  const left = a?.data ?? {};
  const right = b?.data ?? {};
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  return (a === null) === (b === null) && [...keys].every((k) => left[k] === right[k]);
}

async function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StateError) throw error;
    throw new StateError(`${what}: ${(error as Error).message}`, { cause: error });
  }
}
