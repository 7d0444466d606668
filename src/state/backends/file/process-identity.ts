import { readFileSync, readlinkSync } from 'node:fs';

/**
 * What tells a process from a later one that was given the same pid: on Linux its start time (clock
 * ticks after boot, field 22 of /proc/<pid>/stat) and the boot it belongs to. Empty where there is
 * no /proc: the pid is all there is.
 */
export interface ProcessIdentity {
  startTime?: string;
  bootId?: string;
  /**
   * The pid namespace (`pid:[4026531836]`): containers that share a hostname (host networking) but
   * not their pids see different processes under one pid, so a pid says nothing across namespaces.
   */
  pidNamespace?: string;
}

/** What `read` gives, or undefined where /proc does not show it. */
function fromProc(read: () => string): string | undefined {
  let text: string | undefined;
  try {
    text = read();
  } catch {
    // Not shown: no /proc, or the process is gone.
  }
  return text;
}

function readProc(path: string): string | undefined {
  return fromProc(() => readFileSync(path, 'utf8'));
}

/** Fields 3 (state) and 22 (start time). Field 2, the name, may itself hold spaces and parentheses. */
function readStat(pid: number): { state: string; startTime: string } | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, startTime] = [fields[0], fields[19]];
  return state && startTime ? { state, startTime } : undefined;
}

// Neither changes while this process runs: each is read once, when first needed.
let bootId: { value: string | undefined } | undefined;
let own: ProcessIdentity | undefined;

function currentBootId(): string | undefined {
  bootId ??= { value: readProc('/proc/sys/kernel/random/boot_id')?.trim() || undefined };
  return bootId.value;
}

/** The identity of a running process, or undefined when /proc cannot show it. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  if (!stat) return undefined;
  const boot = currentBootId();
  return boot ? { startTime: stat.startTime, bootId: boot } : { startTime: stat.startTime };
}

export function currentProcessIdentity(): ProcessIdentity {
  own ??= ownIdentity();
  return own;
}

function ownIdentity(): ProcessIdentity {
  const namespace = fromProc(() => readlinkSync('/proc/self/ns/pid'));
  return { ...processIdentity(process.pid), ...(namespace ? { pidNamespace: namespace } : {}) };
}

/**
 * Whether a pid recorded with `identity` can be judged from this process at all: not when it was
 * recorded in another pid namespace (another container that merely shares the hostname).
 */
export function sharesPidNamespace(identity: ProcessIdentity | undefined): boolean {
  const ours = currentProcessIdentity().pidNamespace;
  return !identity?.pidNamespace || !ours || identity.pidNamespace === ours;
}

/**
 * Whether the process that recorded `identity` under `pid` on this host still runs. A pid that now
 * belongs to a process started at another time, or a record from an earlier boot, means the recorded
 * process is gone. Where /proc does not show the pid (no /proc, or another user's process hidden by
 * `hidepid`), only kill(pid, 0) can tell, and a pid that exists counts as alive.
 */
export function processIsAlive(pid: number, identity: ProcessIdentity = {}): boolean {
  // kill(0, …) and kill(-n, …) address process groups: such a pid can only come from a damaged
  // record. A pid that is no integer is refused by kill itself (and /proc shows none).
  if (pid <= 0) return false;
  const boot = currentBootId();
  if (identity.bootId && boot && identity.bootId !== boot) return false;
  const stat = readStat(pid);
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X') return false; // exited, only waiting to be reaped
    return !identity.startTime || identity.startTime === stat.startTime;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
