// A repeatable CPU profile of `once` over due tokens (issue 25, goal 1), beside the floor client.
// Not part of `npm run bench`: a tool for finding where `once` spends its CPU.
//
//   node bench/profile-once.mjs [--runs N] [--count 200] [--latency 25] [--cli dist/cli/main.js ...]
//                               [--prof DIR] [--top 15] [--no-floor] [--strace] [--cpus LIST]
//                               [--preload FILE] [--node-arg FLAG ...]
// (PROFILE_INCLUSIVE=REGEX adds inclusive time by src function, dependencies matching REGEX by function.)
//
// Each run sets up a fresh in-process counted emulator with `count` due tokens (bench/lib.mjs) and
// runs, interleaved, the floor client and `once` of every --cli given (e.g. a copy of main's dist
// beside this branch's), each under /usr/bin/time: user, system and wall seconds per run, then the
// medians. --prof DIR: the `once` runs also write a V8 CPU profile (--cpu-prof) to DIR/N (N: the
// --cli's index), and each --cli's main-thread samples are summarised by area, by function, by the
// nearest caller of ours (owner) and by file, through the bundle's source maps, so esbuild's chunks
// read as src/ and node_modules/ paths again. Each sample counts at most twice the sampling interval,
// so that a wait for a CPU on a busy machine is not charged to the function it interrupted; still,
// compare runs made interleaved, in the same conditions. --strace: system calls by name instead (strace -f -c), which
// the machine's load does not change. TMPDIR=/dev/shm keeps the disk's fsync noise out of CPU times.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { floorClientRun } from './floor-client.mjs';
import { childEnv, median, ROOT, rotatorFolder, seedTokens, startCountedEmulator } from './lib.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    count: { type: 'string', default: '200' },
    latency: { type: 'string', default: '25' },
    cli: { type: 'string', multiple: true, default: ['dist/cli/main.js'] },
    prof: { type: 'string' },
    top: { type: 'string', default: '15' },
    'no-floor': { type: 'boolean', default: false },
    strace: { type: 'boolean', default: false },
    cpus: { type: 'string' },
    preload: { type: 'string' },
    'node-arg': { type: 'string', multiple: true, default: [] },
  },
});
const count = Number(values.count);
const latencyMs = Number(values.latency);
const clis = values.cli.map((c) => resolve(ROOT, c));

/** `node ARGS` under /usr/bin/time: exit code, user, system and wall seconds. */
async function timed(nodeArgs, { cwd, env }) {
  const out = join(os.tmpdir(), `profile-once-time-${process.pid}-${Math.random().toString(16).slice(2)}`);
  // --cpus LIST: the child runs on those CPUs only (taskset), so its threads do not spread over a shared machine.
  const pin = values.cpus ? ['taskset', '-c', values.cpus] : [];
  const child = spawn('/usr/bin/time', ['-f', '%U %S %e', '-o', out, ...pin, process.execPath, ...nodeArgs], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const code = await new Promise((done) => child.on('close', (c, signal) => done(c ?? signal)));
  const [user, sys, wall] = (await readFile(out, 'utf8')).trim().split('\n').at(-1).split(' ').map(Number);
  await rm(out, { force: true });
  if (code !== 0) process.stderr.write(`exit ${code}: ${stderr}\n`);
  return { code, user, sys, wall };
}

/** Every system call of one `once` run, every thread (strace -f -c): counts, which do not depend on the machine's load. */
async function onceSyscalls(cli) {
  const { emulator } = await startCountedEmulator({ latencyMs });
  const tokens = seedTokens(emulator, count);
  const folder = await rotatorFolder(emulator, tokens);
  const out = join(folder.dir, 'strace.txt');
  try {
    const child = spawn('strace', ['-f', '-c', '-o', out, process.execPath, cli, 'once', ...folder.args], {
      cwd: folder.dir,
      env: childEnv(),
      stdio: 'ignore',
    });
    await new Promise((done) => child.on('close', done));
    const rows = (await readFile(out, 'utf8'))
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f.length >= 5 && /^\d+$/.test(f[3]));
    const calls = new Map(rows.map((f) => [f.at(-1), Number(f[3])]));
    return calls;
  } finally {
    await emulator.close();
    await folder.remove();
  }
}

async function onceTimed(cli, profDir) {
  const { emulator } = await startCountedEmulator({ latencyMs });
  const tokens = seedTokens(emulator, count);
  const folder = await rotatorFolder(emulator, tokens);
  try {
    const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    // --preload FILE: a module loaded before the CLI (--import), e.g. one that reports CPU by thread.
    if (values.preload) prof.push('--import', resolve(values.preload));
    // --node-arg FLAG (repeatable): a flag for the CLI's node, e.g. a V8 flag to weigh.
    prof.push(...values['node-arg']);
    const run = await timed([...prof, cli, 'once', ...folder.args], { cwd: folder.dir, env: childEnv() });
    const rotated = emulator.requests.filter((r) => r.op === 'regenerate' && r.status === 200).length;
    return { ...run, ok: run.code === 0 && rotated === count };
  } finally {
    await emulator.close();
    await folder.remove();
  }
}

// floorClientRun measures by /usr/bin/time too, but as user+system in one figure.
async function floorTimed() {
  const run = await floorClientRun({ count, latencyMs });
  return { code: run.code, ok: run.ok, cpu: run.cpuMs / 1000, wall: run.ms / 1000 };
}

if (values.strace) {
  for (const cli of clis) {
    const calls = await onceSyscalls(cli);
    const top = [...calls]
      .filter(([name]) => name !== 'total')
      .sort((a, b) => b[1] - a[1])
      .slice(0, 14);
    console.log(
      `${relative(ROOT, cli)}: ${calls.get('total')} syscalls (${(calls.get('total') / count).toFixed(1)} per token); ${top.map(([n, c]) => `${n} ${c}`).join(', ')}`,
    );
  }
  process.exit(0);
}

const rows = new Map([['floor', []], ...clis.map((c) => [c, []])]);
const profDirs = clis.map((_, i) => (values.prof ? resolve(values.prof, String(i)) : undefined));
for (const dir of profDirs) if (dir) await mkdir(dir, { recursive: true });
for (let i = 0; i < Number(values.runs); i += 1) {
  if (!values['no-floor']) rows.get('floor').push(await floorTimed());
  for (const [index, cli] of clis.entries()) rows.get(cli).push(await onceTimed(cli, profDirs[index]));
}

const fmt = (n) => n.toFixed(2);
for (const [name, runs] of rows) {
  if (!runs.length) continue;
  const cpu = runs.map((r) => r.cpu ?? r.user + r.sys);
  const label = name === 'floor' ? 'floor client' : relative(ROOT, name);
  const each = runs.map(
    (r) => (r.user === undefined ? `cpu ${fmt(r.cpu)}` : `${fmt(r.user)}u ${fmt(r.sys)}s`) + ` ${fmt(r.wall)}w${r.ok ? '' : ' FAILED'}`,
  );
  console.log(
    `${label.padEnd(28)} cpu median ${fmt(median(cpu))} s, wall median ${fmt(median(runs.map((r) => r.wall)))} s  [${each.join('; ')}]`,
  );
}

for (const [index, dir] of profDirs.entries()) {
  if (!dir) continue;
  console.log(`\n=== ${relative(ROOT, clis[index])} ===`);
  summarise(dir, Number(values.top));
}

/** The area a sample belongs to, by the file of its owner (see ownerOf): `module` is '' for no owner. */
function areaOf(module, frame) {
  if (!module)
    return ['(idle)', '(garbage collector)', '(program)'].includes(frame.functionName)
      ? frame.functionName
      : 'Node internals with no caller in src/ or a dependency';
  if (/src\/(fs|state\/backends)\//.test(module)) return 'src/fs, src/state/backends: the file system layer';
  if (/src\/(cli|config|policy)\//.test(module)) return 'src/cli, src/config, src/policy (start-up)';
  if (/src\/(log|scrub)\/|src\/secret\.ts/.test(module)) return 'src/log, src/scrub, src/secret.ts';
  if (/src\//.test(module)) return 'rest of src/';
  if (
    /node_modules\/(got|@sindresorhus|cacheable-request|decompress-response|p-cancelable|http2-wrapper|byte-counter|responselike|lowercase-keys|mimic-response|form-data-encoder|get-stream)/.test(
      module,
    )
  )
    return 'got and its dependencies';
  if (/node_modules\/(pino|sonic-boom|@pinojs|thread-stream|safe-stable-stringify|pino-std-serializers)/.test(module))
    return 'pino (sonic-boom, redact)';
  return module.startsWith('node_modules/') ? `${module}` : 'other';
}

/** Self time of every profile in `dir`, by function and by source file. */
function summarise(dir, top) {
  const maps = new Map();
  const mapOf = (url) => {
    if (!url.startsWith('file://')) return undefined;
    if (!maps.has(url)) {
      let map;
      try {
        const file = fileURLToPath(url);
        const text = readFileSync(file, 'utf8');
        const ref = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
        if (ref && !ref.startsWith('data:')) map = new SourceMap(JSON.parse(readFileSync(resolve(file, '..', ref), 'utf8')));
      } catch {
        map = undefined;
      }
      maps.set(url, map);
    }
    return maps.get(url);
  };
  const where = (frame) => {
    const { url, lineNumber, columnNumber, functionName } = frame;
    const map = mapOf(url);
    const entry = map?.findEntry(lineNumber, columnNumber);
    let source = entry?.originalSource ?? url;
    source = source
      .replace(/^file:\/\//, '')
      .replace(`${ROOT}`, '')
      .replace(/^.*node_modules\//, 'node_modules/');
    const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
    const module = pkg ? `node_modules/${pkg}` : source || '(native)';
    const line = entry?.originalLine !== undefined ? entry.originalLine + 1 : lineNumber + 1;
    return { fn: `${functionName || '(anonymous)'} ${source.split('/').slice(-2).join('/')}:${line}`, module };
  };
  const byFn = new Map();
  const byModule = new Map();
  const byOwner = new Map();
  const inclusive = new Map();
  const byArea = new Map();
  // PROFILE_INCLUSIVE=REGEX: dependencies whose path matches are shown by function, not as one package.
  const detail = process.env.PROFILE_INCLUSIVE ? new RegExp(process.env.PROFILE_INCLUSIVE) : undefined;
  let total = 0;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parents = new Map();
    for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
    // The nearest frame (this one or a caller) in src/ or a dependency: who asked for this time.
    const owners = new Map();
    const ownerOf = (id) => {
      if (owners.has(id)) return owners.get(id);
      const frame = nodes.get(id).callFrame;
      const w = frame.url ? where(frame) : undefined;
      let owner;
      if (w && !w.module.startsWith('node:')) owner = w;
      else if (parents.has(id)) owner = ownerOf(parents.get(id));
      else owner = { fn: `(${frame.functionName || 'root'})`, module: '' };
      owners.set(id, owner);
      return owner;
    };
    // A sample's time is the wall time since the one before: one taken after the thread waited for a
    // CPU (a busy machine) would carry that wait. Capped at twice the usual interval, samples count
    // time on a CPU.
    const deltas = profile.timeDeltas.toSorted((a, b) => a - b);
    const cap = 2 * (deltas[deltas.length >> 1] ?? 1000);
    const self = new Map();
    for (let i = 0; i < profile.samples.length; i += 1) {
      self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + Math.min(profile.timeDeltas[i] ?? 0, cap));
    }
    for (const [id, us] of self) {
      const frame = nodes.get(id).callFrame;
      const w = where(frame);
      byFn.set(w.fn, (byFn.get(w.fn) ?? 0) + us);
      const module = frame.url ? w.module : `(${frame.functionName || 'native'})`;
      byModule.set(module, (byModule.get(module) ?? 0) + us);
      const seen = new Set();
      for (let at = id; at !== undefined; at = parents.get(at)) {
        const f = nodes.get(at).callFrame;
        if (!f.url) continue;
        const w = where(f);
        if (!w.module.startsWith('node_modules/') && !w.module.includes('src/')) continue;
        seen.add(w.module.startsWith('node_modules/') && !detail?.test(w.module) ? w.module : w.fn);
      }
      for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      const owner = ownerOf(id);
      byOwner.set(owner.fn, (byOwner.get(owner.fn) ?? 0) + us);
      const area = areaOf(owner.module, frame);
      byArea.set(area, (byArea.get(area) ?? 0) + us);
      total += us;
    }
  }
  const per = (us) => `${(us / 1000 / files.length).toFixed(1).padStart(7)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%`;
  console.log(`\nprofiles: ${files.length}; main-thread samples ${(total / 1000 / files.length).toFixed(0)} ms per run (idle included)`);
  console.log('\nby area (owner as below):');
  for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1])) console.log(`${per(us)}  ${a}`);
  console.log(`\ntop ${top} self time by function (per run):`);
  for (const [fn, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${per(us)}  ${fn}`);
  console.log(
    `\ntop ${top * 2} by owner: self time, with Node's own frames charged to their nearest caller in src/ or a dependency (per run):`,
  );
  for (const [o, us] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(`${per(us)}  ${o}`);
  if (process.env.PROFILE_INCLUSIVE) {
    console.log(`\ntop ${top * 12} inclusive (src functions, dependency packages) per run:`);
    for (const [o, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top * 12)) console.log(`${per(us)}  ${o}`);
  }
  console.log(`\ntop ${top * 2} self time by file (per run):`);
  for (const [m, us] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(`${per(us)}  ${m}`);
}
