import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * How the program starts its helper: in the background, under nohup, or in a session of its own;
 * `escaped`: in a session of its own with an empty environment; `daemon`: in a session of its own
 * with its output to /dev/null, so that nothing is held open.
 */
export type HelperStart = 'background' | 'nohup' | 'setsid' | 'escaped' | 'daemon';

const STARTERS: Record<HelperStart, [string, string]> = {
  background: ['', ''],
  nohup: ['nohup ', ''],
  setsid: ['setsid ', ''],
  escaped: ['setsid env -i ', ''],
  daemon: ['setsid ', ' </dev/null >/dev/null 2>&1'],
};

/**
 * A careless push program, as the red team wrote it: it stores its stdin in `DEST`, starts a helper
 * (`sleep 300`) that keeps the program's stdout and stderr open (but see `daemon`), and exits 0 (or with `EXIT`, its
 * second argument), or, given `--hang`, sleeps in the foreground too. The helper writes its pid to
 * `DEST.helper-pid` before the program goes on, so that a test can always end it; a hanging program
 * makes `DEST.hanging` (a shell builtin, no child) just before it becomes its `sleep`, so that a test
 * stops it only once its waiting loop's `sleep 0.05` children are gone.
 */

/** Whether a `--hang` program has reached its final sleep (see `writeHelperLeavingProgram`). */
export async function isHanging(dest: string): Promise<boolean> {
  return readFile(`${dest}.hanging`).then(
    () => true,
    () => false,
  );
}
export async function writeHelperLeavingProgram(dir: string, start: HelperStart): Promise<string> {
  const path = join(dir, `leave-helper-${start}.sh`);
  await writeFile(
    path,
    `#!/bin/sh
dest="$1"
cat > "$dest"
${STARTERS[start][0]}sh -c 'echo $$ > "$0.helper-pid"; exec sleep 300' "$dest"${STARTERS[start][1]} &
while [ ! -s "$dest.helper-pid" ]; do sleep 0.05; done
echo created
if [ "$2" = "--hang" ]; then : > "$dest.hanging"; exec sleep 300; fi
exit "\${2:-0}"
`,
  );
  await chmod(path, 0o755);
  return path;
}

/** The helper's pid, once it has written it. */
export async function helperPid(dest: string): Promise<number | undefined> {
  const text = await readFile(`${dest}.helper-pid`, 'utf8').catch(() => '');
  return text.trim() ? Number(text.trim()) : undefined;
}

/** Whether the process `pid` is still running (a zombie counts as ended). */
export async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return false;
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** Resolves once `pid` has ended: a killed process ends in the kernel's own time, soon after the kill. */
export async function ended(pid: number): Promise<void> {
  while (await isRunning(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * Ends a helper a test started, whatever the test's outcome: by its pid, and only while it still is
 * a `sleep` (a pid may have been reused since).
 */
export async function endHelper(dest: string): Promise<void> {
  const pid = await helperPid(dest);
  if (pid === undefined) return;
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!command.startsWith('sleep\0')) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ended meanwhile
  }
}
