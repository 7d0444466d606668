import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { systemClock } from '../../src/clock.js';
import { openStateBackend } from '../../src/state/backends/registry.js';
import type { StateBackend } from '../../src/state/state-backend.js';
import { type BackendHarness, type RawKind, stateBackendContract } from '../contracts/state-backend-contract.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** A pid no process on this host has: above Linux's highest pid_max (2^22), and checked. */
function deadPid(): number {
  for (let pid = 4_194_305; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

/**
 * The file backend over a real temporary folder. Every view is this process (its pid), told apart
 * by its locks' nonces, as two lock instances of one process are. A crash rewrites the view's lock
 * files as a dead process leaves them: the same record (nonce included), with a pid that does not
 * exist on this host, which is how the backend tells an abandoned lock.
 */
async function openFileBackend(): Promise<BackendHarness> {
  const root = await makeTempDir();
  const dir = join(root, 'state');
  const lockFile = (name: string) => join(dir, 'locks', `${name}.lock`);
  const fileOf = (kind: RawKind, name: string) => join(dir, kind === 'state' ? 'tokens' : 'journal', `${name}.json`);
  /** For each view: the names it holds now, with the nonce of its lock record. */
  const heldBy = new WeakMap<StateBackend, Map<string, string>>();

  async function openView(): Promise<StateBackend> {
    const backend = await openStateBackend('file', { dir, env: {}, clock: systemClock, logger: silentLogger() });
    const held = new Map<string, string>();
    const view: StateBackend = {
      ...backend,
      locks: {
        async acquire(name, options) {
          const result = await backend.locks.acquire(name, options);
          if ('busy' in result) return result;
          const { nonce } = JSON.parse(await readFile(lockFile(name), 'utf8')) as { nonce: string };
          held.set(name, nonce);
          return {
            held: {
              assertHeld: () => result.held.assertHeld(),
              release: async () => {
                held.delete(name);
                await result.held.release();
              },
            },
          };
        },
      },
    };
    heldBy.set(view, held);
    return view;
  }

  return {
    backend: await openView(),
    openView,
    async crash(view) {
      const held = heldBy.get(view)!;
      for (const [name, nonce] of held) {
        const owner = JSON.parse(await readFile(lockFile(name), 'utf8')) as { nonce?: string };
        if (owner.nonce !== nonce) continue;
        const temporary = `${lockFile(name)}.crash`;
        await writeFile(temporary, JSON.stringify({ ...owner, pid: deadPid() }), { mode: 0o600 });
        await rename(temporary, lockFile(name));
      }
      held.clear();
    },
    async writeRaw(kind, name, text) {
      await mkdir(join(fileOf(kind, name), '..'), { recursive: true });
      await writeFile(fileOf(kind, name), text);
    },
    async readRaw(kind, name) {
      return readFile(fileOf(kind, name), 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
    },
    close: () => rm(root, { recursive: true, force: true }),
  };
}

stateBackendContract('file', openFileBackend);

describe('the file backend harness', () => {
  it('simulates a crashed owner by a lock record whose pid does not exist on this host', async () => {
    const h = await openFileBackend();
    try {
      await h.backend.locks.acquire('alpha', { waitMs: 0 });
      const before = JSON.parse(await readFile(join(dirOf(h), 'locks/alpha.lock'), 'utf8')) as Record<string, unknown>;
      await h.crash(h.backend);
      const after = JSON.parse(await readFile(join(dirOf(h), 'locks/alpha.lock'), 'utf8')) as Record<string, unknown>;
      expect(after).toEqual({ ...before, pid: expect.any(Number) });
      expect(after.pid).not.toBe(process.pid);
      expect(() => process.kill(after.pid as number, 0)).toThrow(/ESRCH/);
    } finally {
      await h.close?.();
    }
  });
});

/** The state folder, as the backend describes itself: `file <dir>`. */
function dirOf(h: BackendHarness): string {
  return h.backend.describe().replace(/^file /, '');
}
