import type { StateBackendType } from '../../state-backend.js';

/**
 * Files under the state folder, 0600 in 0700 folders: `tokens/<name>.json` (atomic, fsync'd),
 * `locks/<name>.lock`, `journal/journal.log`, an append-only log (see journal-log.ts), and
 * `journal/<name>.json` for a held entry or one written by an earlier version.
 */
export const fileStateBackend: StateBackendType = {
  summary: 'files in ROTATOR_STATE_DIR (the default)',
  where: ({ dir, env }) => `file ${dir}${env.ROTATOR_STATE_DIR ? '' : ' (beside the policy file)'}`,
  async open({ dir, clock }) {
    const [{ fileStateStore }, { fileJournal }, { fileNameLocks }] = await Promise.all([
      import('./file-state-store.js'),
      import('./file-journal.js'),
      import('./file-locks.js'),
    ]);
    return {
      describe: () => `file ${dir}`,
      state: fileStateStore(dir),
      journal: fileJournal(dir, { clock }),
      locks: fileNameLocks(dir, { clock }),
    };
  },
};
