// Row x2 (issue 25: "report syscalls per rotation (strace -c -f) before and after"): the file
// syscalls of `once` over N due tokens, per rotation, beside those of the minimal durable client
// (bench/floor-client.mjs) doing the same rotations. Counts only: strace slows a run several times,
// so no time from here is reported. Skipped (n/a, with the reason) where strace is not installed.
// Part of npm run bench (bench/run.mjs); `node bench/syscalls.mjs` runs it alone.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import { floorClientFolder } from './floor-client.mjs';
import { childEnv, QUICK, rotatorFolder, runCli, runNode, runStandalone, seedTokens, startCountedEmulator } from './lib.mjs';

const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));
const SYSCALLS = ['fsync', 'fdatasync', 'openat', 'rename', 'renameat2', 'link', 'unlink', 'statx', 'newfstatat', 'write'];

/**
 * Calls by syscall from strace's -c summary (`% time seconds usecs/call calls [errors] syscall`);
 * the total line and anything else are skipped.
 */
export function parseStraceSummary(text) {
  const calls = {};
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    const name = fields.at(-1);
    if (fields.length < 5 || !/^[a-z_0-9]+$/.test(name) || name === 'total' || !/^\d+$/.test(fields[3])) continue;
    calls[name] = (calls[name] ?? 0) + Number(fields[3]);
  }
  return calls;
}

const straceArgs = (file) => [STRACE, '-f', '-c', '-o', file, '-e', `trace=${SYSCALLS.join(',')}`];

/** Calls per rotation, by the names the row prints (rename and renameat2 together, and so on). */
function perRotation(calls, rotations) {
  const sum = (...names) => names.reduce((s, n) => s + (calls[n] ?? 0), 0) / rotations;
  return {
    fsync: sum('fsync', 'fdatasync'),
    openat: sum('openat'),
    statx: sum('statx', 'newfstatat'),
    rename: sum('rename', 'renameat2'),
    link: sum('link'),
    unlink: sum('unlink'),
    write: sum('write'),
  };
}

const brief = (p) =>
  `${p.fsync.toFixed(1)} fsync, ${p.openat.toFixed(1)} openat, ${p.statx.toFixed(1)} statx, ${p.rename.toFixed(1)} rename`;

async function tracedOnce(count) {
  const { emulator } = await startCountedEmulator();
  const tokens = seedTokens(emulator, count);
  const folder = await rotatorFolder(emulator, tokens);
  const out = join(folder.dir, 'strace.txt');
  try {
    const run = await runCli(['once', ...folder.args], { cwd: folder.dir, env: childEnv(), wrapper: straceArgs(out) });
    const rotated = emulator.requests.filter((r) => r.op === 'regenerate' && r.status === 200).length;
    const delivered = (await readdir(join(folder.dir, 'secrets')).catch(() => [])).length;
    const ok = run.code === 0 && rotated === count && delivered === count;
    return {
      ok,
      code: run.code,
      rotated,
      calls: parseStraceSummary(await readFile(out, 'utf8').catch(() => '')),
      stderrTail: ok ? undefined : run.stderr.slice(-1500),
    };
  } finally {
    await emulator.close();
    await folder.remove();
  }
}

async function tracedFloorClient(count) {
  const { emulator } = await startCountedEmulator();
  const tokens = seedTokens(emulator, count);
  const folder = await floorClientFolder(tokens);
  const out = join(folder.dir, 'strace.txt');
  try {
    const run = await runNode(folder.args, { env: childEnv(emulator.rotatorEnv()), wrapper: straceArgs(out) });
    const rotated = emulator.requests.filter((r) => r.op === 'regenerate' && r.status === 200).length;
    return {
      ok: run.code === 0 && rotated === count,
      code: run.code,
      rotated,
      calls: parseStraceSummary(await readFile(out, 'utf8').catch(() => '')),
    };
  } finally {
    await emulator.close();
    await folder.remove();
  }
}

/**
 * Why strace cannot trace here (ptrace refused in a container, say), or undefined when it can: a
 * traced `node -e 0` must exit 0 and leave a summary.
 */
async function straceRefusal() {
  if (!STRACE) return 'strace is not installed';
  const dir = await mkdtemp(join(os.tmpdir(), 'token-rotator-strace-'));
  try {
    const run = await runNode(['-e', '0'], { wrapper: straceArgs(join(dir, 'probe.txt')) });
    const calls = parseStraceSummary(await readFile(join(dir, 'probe.txt'), 'utf8').catch(() => ''));
    if (run.code === 0 && calls.openat) return undefined;
    const said = run.stderr.trim().split('\n')[0]?.slice(0, 120);
    return `strace cannot trace here (exit ${run.code}, ${said || 'no summary'})`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Calls of the bigger run beyond the smaller one's, by syscall: what `extra` more rotations cost. */
function beyond(big, small) {
  return Object.fromEntries(Object.keys({ ...big, ...small }).map((name) => [name, (big[name] ?? 0) - (small[name] ?? 0)]));
}

/**
 * Per rotation two ways: amortized (every call of a run over `count`, start-up included, as issue 25
 * measured) and marginal (a run over `count` less one over a twentieth of it, so that start-up and
 * module loading, the same in both, cancel out).
 */
export async function syscalls({ count = 200 } = {}) {
  const row = { id: 'x2', goal: `syscalls per rotation: once, ${count} due (strace -c -f)`, target: 'stated' };
  const refusal = await straceRefusal();
  if (refusal) return { ...row, measured: 'n/a', baseline: '-', result: 'n/a', value: NaN, details: { skipped: refusal } };
  const few = Math.max(1, Math.round(count / 20));
  const once = await tracedOnce(count);
  const onceFew = await tracedOnce(few);
  const floor = await tracedFloorClient(count);
  const floorFew = await tracedFloorClient(few);
  const onceEach = perRotation(once.calls, count);
  const floorEach = perRotation(floor.calls, count);
  const onceMarginal = perRotation(beyond(once.calls, onceFew.calls), count - few);
  const floorMarginal = perRotation(beyond(floor.calls, floorFew.calls), count - few);
  const ok = once.ok && onceFew.ok;
  const error = ok ? '' : ` (ERROR: exit ${once.code}/${onceFew.code}, ${once.rotated}/${onceFew.rotated} rotated)`;
  return {
    ...row,
    measured: `${brief(onceEach)} /rotation${error}`,
    baseline: `floor client: ${brief(floorEach)}${floor.ok && floorFew.ok ? '' : ' (FAILED)'}`,
    result: ok ? 'stated' : 'error',
    value: onceEach.fsync,
    unit: 'fsync per rotation',
    details: {
      once: onceEach,
      floorClient: floorEach,
      onceMarginal,
      floorClientMarginal: floorMarginal,
      onceCalls: once.calls,
      floorCalls: floor.calls,
      note:
        `amortized over ${count} (start-up included, as issue 25 counted); marginal: ${count} less ${few} rotations, start-up cancelled. ` +
        'fsync counts fsync+fdatasync, statx counts statx+newfstatat, every thread (-f); write includes log and pipe writes; counts only, strace slows runs',
      stderrTail: once.stderrTail ?? onceFew.stderrTail,
    },
  };
}

await runStandalone(import.meta.url, () => syscalls({ count: QUICK ? 5 : 200 }));
