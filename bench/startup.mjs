// Rows 4a-4d (goal 2 of issue 25): start-up of `--version`, `--help` and `validate` (a small policy, no network)
// against bare `node -e 0`, the median wall time from spawn to exit over several runs each, taken in
// turns so that a slow moment of the machine falls on every command alike; and the peak RSS of
// `--version` against bare Node's.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import { stringify } from 'yaml';

import { childEnv, CLI, mb, median, runNode, sec, writeEnvFile } from './lib.mjs';

export async function startup({ runs, rssRuns }) {
  const dir = await mkdtemp(join(os.tmpdir(), 'token-rotator-startup-'));
  try {
    await writeFile(
      join(dir, 'rotation.yaml'),
      stringify({
        version: 1,
        tokens: ['ingest', 'query', 'audit'].map((name) => ({
          name,
          id: `${name}-1`,
          sinks: [{ type: 'file', path: `secrets/${name}.token` }],
        })),
      }),
    );
    await writeEnvFile(join(dir, 'rotator.env'), {
      ROTATOR_API_URL: 'http://127.0.0.1:9',
      ROTATOR_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/oauth/token',
      ROTATOR_OAUTH_CLIENT_ID: 'bench',
      ROTATOR_OAUTH_CLIENT_SECRET: 'not-a-secret',
    });
    const commands = {
      node: ['-e', '0'],
      version: [CLI, '--version'],
      help: [CLI, '--help'],
      validate: [CLI, 'validate', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'],
    };
    const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
    const codes = {};
    // One warm-up each (file cache), then `runs` rounds.
    for (let round = -1; round < runs; round++) {
      for (const [name, args] of Object.entries(commands)) {
        const run = await runNode(args, { cwd: dir, env: childEnv() });
        codes[name] = run.code;
        if (run.code !== 0) throw new Error(`${name} exited ${run.code}: ${run.stderr.slice(-1000)}`);
        if (round >= 0) times[name].push(run.ms);
      }
    }
    const peak = { node: [], version: [] };
    for (let i = 0; i < rssRuns; i++) {
      for (const name of Object.keys(peak)) peak[name].push((await runNode(commands[name], { cwd: dir, peakRss: true })).peakRssBytes);
    }
    const by = (await runNode(commands.node, { cwd: dir, peakRss: true })).peakRssBy;
    const node = median(times.node);
    const row = (id, name, label, goal) => {
      const ms = median(times[name]);
      const ratio = ms / node;
      return {
        id,
        goal: `4 start-up: ${label}`,
        target: `≤ ${goal}× bare node`,
        measured: `${sec(ms)} s = ${ratio.toFixed(1)}×`,
        baseline: `node -e 0: ${sec(node)} s`,
        result: ratio <= goal ? 'pass' : 'short',
        value: ratio,
        unit: '× node',
        details: { medianSeconds: ms / 1000, nodeMedianSeconds: node / 1000, runs: times[name].map((t) => t / 1000) },
      };
    };
    const rssVersion = median(peak.version);
    const rssNode = median(peak.node);
    return [
      row('4a', 'version', 'token-rotator --version', 2),
      row('4b', 'help', 'token-rotator --help', 2),
      row('4c', 'validate', 'token-rotator validate (3 tokens)', 3),
      {
        id: '4d',
        goal: '4 start-up: peak RSS of --version',
        target: 'stated (no figure in the goal)',
        measured: Number.isFinite(rssVersion) ? `${mb(rssVersion)} MB = ${(rssVersion / rssNode).toFixed(1)}×` : 'not measured',
        baseline: Number.isFinite(rssNode) ? `node -e 0: ${mb(rssNode)} MB` : 'n/a',
        result: Number.isFinite(rssVersion) ? 'stated' : 'n/a',
        value: Number.isFinite(rssVersion) ? rssVersion / 1024 / 1024 : NaN,
        unit: 'MB',
        details: { measuredBy: by, versionBytes: peak.version, nodeBytes: peak.node },
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
