import type { ISecret } from 'kubernetes-models/v1/Secret';

import { KubernetesError, StateError } from '../../../errors.js';
import type { KubernetesClient } from '../../../kubernetes/client.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../kubernetes/names.js';
import { JOURNAL_INDEX_NAME, ROLE_LABEL } from '../../../kubernetes/rotator-objects.js';

/** The data key that holds the names, a JSON list. */
const KEY = 'names';
/**
 * How many times a change is tried again when another process changed the index first. Each round
 * one writer wins, and writers are the names starting or ending a rotation at that moment.
 */
const ATTEMPTS = 20;

/**
 * The names that may have a journal entry, in one Secret of the state namespace: a name is added
 * before its first entry is written and removed after its entry is erased (both under the name's
 * lock), so every entry's name is listed. It is what lets an unfinished rotation whose name left
 * the policy be found by reading named objects only: the backend never LISTs Secrets, which would
 * need `list` on every Secret of the namespace. A crash between an erase and the removal leaves a
 * name with no entry behind; readers check each name's object, and the name's next erase removes it.
 */
export interface JournalIndex {
  names(): Promise<string[]>;
  add(name: string): Promise<void>;
  remove(name: string): Promise<void>;
}

export function journalIndex(api: KubernetesClient, namespace: string): JournalIndex {
  const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const path = `${collection}/${JOURNAL_INDEX_NAME}`;
  const where = `Secret ${namespace}/${JOURNAL_INDEX_NAME}`;

  async function read(): Promise<{ object: ISecret | undefined; names: Set<string> }> {
    let object: ISecret | undefined;
    try {
      object = await api.get<ISecret>(path);
    } catch (error) {
      throw new StateError(`cannot read ${where}: ${(error as Error).message}`, { cause: error });
    }
    return { object, names: new Set(namesIn(object)) };
  }

  function namesIn(object: ISecret | undefined): string[] {
    const data = object?.data?.[KEY];
    if (data === undefined) return [];
    let names: unknown;
    try {
      names = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
    } catch {
      names = undefined;
    }
    if (Array.isArray(names) && names.every((n) => typeof n === 'string')) return names as string[];
    // It holds no secret, only names: putting it right loses nothing but the names it should list.
    throw new StateError(
      `${where} is damaged: its key "${KEY}" must be a JSON list of token names (the names that may have an unfinished rotation). ` +
        `Put it right, or remove the key; then an unfinished rotation of a name that left the policy is found only with ` +
        `kubectl get secrets -n ${namespace} -l ${ROLE_LABEL}=state`,
    );
  }

  /** Applies `change` to the names as stored, conditionally on what was read; `change` answers false when nothing changes. */
  async function update(change: (names: Set<string>) => boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { object, names } = await read();
      if (!change(names)) return;
      const data = { [KEY]: Buffer.from(JSON.stringify([...names].sort()), 'utf8').toString('base64') };
      try {
        // A PUT carries the resourceVersion read: another process's change in between is a 409, never lost.
        if (object) await api.replace(path, { ...object, data: { ...object.data, ...data } });
        else await api.create(collection, newIndex(data));
        return;
      } catch (error) {
        const raced = error instanceof KubernetesError && (error.status === 409 || error.status === 404);
        if (raced && attempt < ATTEMPTS) continue;
        throw new StateError(`cannot write ${where}: ${(error as Error).message}`, { cause: error });
      }
    }
  }

  function newIndex(data: Record<string, string>): ISecret {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: JOURNAL_INDEX_NAME, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: 'index' } },
      type: 'Opaque',
      data,
    };
  }

  /**
   * Changes asked for while an update is in flight wait and go together in the next one: a run
   * starting many rotations at once (its lanes) writes the index once per round, not once per name,
   * and never races itself. Each name's changes come in order (add, then remove, under its lock).
   */
  let queued: Array<{ name: string; add: boolean; settle: (error?: unknown) => void }> = [];
  let draining: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        await update((names) => {
          let changed = false;
          for (const { name, add } of batch) {
            if (add && !names.has(name)) changed = Boolean(names.add(name));
            else if (!add && names.delete(name)) changed = true;
          }
          return changed;
        });
        for (const change of batch) change.settle();
      } catch (error) {
        for (const change of batch) change.settle(error);
      }
    }
    draining = undefined;
  }

  const change = (name: string, add: boolean) =>
    new Promise<void>((resolve, reject) => {
      queued.push({ name, add, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      draining ??= drain();
    });

  return {
    names: async () => [...(await read()).names],
    add: (name) => change(name, true),
    remove: (name) => change(name, false),
  };
}
