import type { StateBackendType } from '../../state-backend.js';

/**
 * Files under the state folder: `tokens/<name>.json`, `journal/<name>.json`, `locks/<name>.lock`,
 * 0600 in 0700 folders, every write atomic and fsync'd.
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
      journal: fileJournal(dir),
      locks: fileNameLocks(dir, { clock }),
    };
  },
};
