import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Vitest runs the root config's global setup and again each project's, which inherits it: the
// first call makes the folder, the others find it (one process, one globalThis) and leave it be.
const MADE = Symbol.for('token-rotator.run-temp-folder');

/**
 * One temporary folder for the whole run: every test's temporary folders, and those of the
 * programs it starts, are made under it (TMPDIR, which the workers and their children inherit),
 * and it is removed at the end, so a run leaves nothing in the system's temporary folder however
 * its tests end. Open to all like /tmp itself: one test writes as another user.
 */
export default function setup(): () => void {
  const made = globalThis as { [MADE]?: true };
  if (made[MADE]) return () => {};
  made[MADE] = true;
  const root = mkdtempSync(join(tmpdir(), 'tr-run-'));
  chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
