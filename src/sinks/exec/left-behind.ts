import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * Marks every process of one run of a program. The program runs in a session and process group of
 * its own, but a helper it starts with `setsid` (or a daemonising double fork) leaves both; its
 * environment, though, goes with it unless it is cleared on purpose. Random per run, so that no
 * other run's processes (another sink's, a concurrent rotation's) are ever taken for this one's.
 * Not a secret.
 */
export const RUN_MARKER_VARIABLE = 'TOKEN_ROTATOR_RUN_ID';

export const newRunMarker = (): string => randomBytes(16).toString('hex');

/**
 * The pipes the program's stdout and stderr are, as /proc names them (Node makes them socket pairs:
 * `socket:[40213]`, the program's end): read as it starts, so that whoever still holds them after it
 * exited can be found even with its environment cleared. A program that is gone before this runs
 * (microseconds after exec) is missed; none where there is no /proc.
 */
export function outputPipesOf(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  return [1, 2].flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return target.startsWith('socket:') || target.startsWith('pipe:') ? [target] : [];
    } catch {
      return [];
    }
  });
}

/** What a program left running once it had exited (or been stopped), all of it killed. */
export interface LeftBehind {
  /** The processes found and killed (SIGKILL), by pid; on a system without /proc, none can be named. */
  killed: number[];
  /**
   * How far the search reached: every process of this user (`every-process`, Linux: those carrying
   * the run's marker, holding the program's output, or in its session or group), or, without /proc,
   * only its process group, killed as a whole (`process-group`).
   */
  searched: 'every-process' | 'process-group';
  /** The program's output was still held open after it exited: something it started kept it. */
  outputHeld: boolean;
}

/** One process, as /proc shows it, and whether it carries the run's marker or holds its output. */
export interface ProcessEntry {
  pid: number;
  group: number;
  session: number;
  zombie: boolean;
  marked: boolean;
  holdsOutput: boolean;
}

/**
 * Which processes are the run's, by pure rule. `leader` is the program's pid, which is also its
 * session's and group's id. Once the program has been reaped (`leaderReaped`), its number may be
 * given to a new process, which would then lead a group of that number: only while no process has
 * that pid is membership of that group or session taken as the run's; the marker and the output's
 * pipes (one inode, only ever the run's) always are.
 */
export function runProcesses(entries: readonly ProcessEntry[], leader: number, leaderReaped: boolean, self: number): number[] {
  const numberReused = leaderReaped && entries.some((e) => e.pid === leader);
  return entries
    .filter(
      (e) => !e.zombie && e.pid !== self && (e.marked || e.holdsOutput || (!numberReused && (e.group === leader || e.session === leader))),
    )
    .map((e) => e.pid)
    .sort((a, b) => a - b);
}

/**
 * Finds what remains of a run and kills it (SIGKILL): the program is over, and nothing it started
 * may outlive it, hold its output open, or keep the rotator's lock on the name waiting. On Linux by
 * /proc (stat for group and session, environ for the marker and, when the output was held, fd for
 * its pipes; another user's environ and fds are unreadable, and so never matched); elsewhere the
 * process group only.
 */
export async function killLeftBehind(run: {
  leader: number;
  leaderReaped: boolean;
  marker: string;
  /** From outputPipesOf, when the output was held: reading every process's fds is for then only. */
  heldPipes: readonly string[];
}): Promise<Pick<LeftBehind, 'killed' | 'searched'>> {
  const entries = await listProcesses(`${RUN_MARKER_VARIABLE}=${run.marker}`, new Set(run.heldPipes));
  if (!entries) {
    if (!run.leaderReaped || !alive(run.leader)) signal(-run.leader);
    return { killed: [], searched: 'process-group' };
  }
  const pids = runProcesses(entries, run.leader, run.leaderReaped, process.pid);
  // The program itself is not what it left behind: it is only here when a stop kills it.
  return { killed: pids.filter((pid) => signal(pid) && pid !== run.leader), searched: 'every-process' };
}

/** SIGKILL to a pid or (negative) a group; false when there was nothing to kill. */
function signal(target: number): boolean {
  try {
    process.kill(target, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every process /proc shows; undefined where there is no /proc to read. */
async function listProcesses(marker: string, pipes: ReadonlySet<string>): Promise<ProcessEntry[] | undefined> {
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return undefined;
  }
  const entries = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map((name) => readEntry(Number(name), marker, pipes)));
  return entries.filter((e): e is ProcessEntry => e !== undefined);
}

async function readEntry(pid: number, marker: string, pipes: ReadonlySet<string>): Promise<ProcessEntry | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  if (stat === undefined) return undefined; // ended meanwhile
  // `pid (comm) state ppid pgrp session …`: comm may hold spaces and parentheses, so read after its last ')'.
  const [state, , group, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
  return {
    pid,
    group: Number(group),
    session: Number(session),
    zombie: state === 'Z' || state === 'X',
    marked: environ.split('\0').includes(marker),
    holdsOutput: pipes.size > 0 && (await holdsAny(pid, pipes)),
  };
}

async function holdsAny(pid: number, pipes: ReadonlySet<string>): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return targets.some((target) => pipes.has(target));
}
