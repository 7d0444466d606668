import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { stringify } from 'yaml';

import { formatOutcomes } from '../cli/format-outcomes.js';
import { terminalWidth } from '../cli/format-table.js';
import type { RunItem } from '../cli/output/run-items.js';
import { startEmulator } from '../emulator/start-emulator.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const keep = process.argv.includes('--keep');

function runCli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd,
        env: {
          PATH: process.env.PATH ?? '',
          ROTATOR_LOG_LEVEL: 'warn',
          // Its stderr is a pipe to the demo: logs as the demo's own terminal would show them.
          ROTATOR_LOG_FORMAT: process.stderr.isTTY ? 'pretty' : 'json',
          ...(process.env.NO_COLOR ? { NO_COLOR: process.env.NO_COLOR } : {}),
        },
      },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The main job end to end on loopback: the emulator (token service + real OAuth server) in this
 * process, `token-rotator once` as a real subprocess reading its credentials from a 0600 env file,
 * never from argv.
 */
async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'token-rotator-demo-'));
  const emulator = await startEmulator({
    seed: {
      tokens: [
        { id: 'ingest-001', name: 'ingest-prod', description: 'due: expires in 2 days', expiresIn: '2d' },
        { id: 'dash-001', name: 'query-dashboard', description: 'not due: 60 days left', expiresIn: '60d' },
        { id: 'audit-001', name: 'audit-reader', description: 'due by share: 20 of 30 days left, renew at 80%', expiresIn: '20d' },
        {
          id: 'legacy-001',
          name: 'legacy-export',
          description: 'never expires: rotated at 90 days (the default maxAge for such tokens)',
          expiresAt: null,
        },
      ],
    },
  });
  try {
    const policy = {
      version: 1,
      defaults: { renewBefore: '7d', overlap: '1h', lifetime: '30d' },
      tokens: [
        { name: 'ingest-prod', id: 'ingest-001', sinks: [{ type: 'file', path: 'secrets/ingest-prod.token' }] },
        { name: 'query-dashboard', id: 'dash-001', sinks: [{ type: 'file', path: 'secrets/query-dashboard.env', format: 'env' }] },
        {
          name: 'audit-reader',
          id: 'audit-001',
          renewBefore: '80%',
          sinks: [{ type: 'file', path: 'secrets/audit-reader.json', format: 'json' }],
        },
        { name: 'legacy-export', id: 'legacy-001', lifetime: 'never', sinks: [{ type: 'file', path: 'secrets/legacy-export.token' }] },
      ],
    };
    await writeFile(join(dir, 'rotation.yaml'), stringify(policy));
    const env = { ...emulator.rotatorEnv(), ROTATOR_STATE_DIR: join(dir, 'state') };
    await writeFile(
      join(dir, 'rotator.env'),
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
      { mode: 0o600 },
    );
    const args = ['--config', 'rotation.yaml', '--dotenv', 'rotator.env'];
    // The tokens that are not due are already deployed, as they would be: their first run adopts them.
    await mkdir(join(dir, 'secrets'), { recursive: true, mode: 0o700 });
    const secretOf = (id: string) => emulator.store.get(id)!.secret;
    await writeFile(join(dir, 'secrets/query-dashboard.env'), `AXIOM_TOKEN=${secretOf('dash-001')}\n`, { mode: 0o600 });
    await writeFile(join(dir, 'secrets/legacy-export.token'), secretOf('legacy-001'), { mode: 0o600 });

    process.stdout.write(`token-rotator demo in ${dir}\nemulator: ${emulator.apiUrl} (OAuth issuer ${emulator.issuer})\n\n`);
    process.stdout.write('$ token-rotator once --config rotation.yaml --dotenv rotator.env\n');
    const first = await runCli(['once', '--json', ...args], dir);
    if (first.stderr) process.stderr.write(first.stderr);
    if (first.code !== 0 && !first.stdout) throw new Error(`once failed with exit code ${first.code}`);
    process.stdout.write(
      formatOutcomes((JSON.parse(first.stdout) as { items: RunItem[] }).items, { width: terminalWidth(process.stdout) }),
    );

    process.stdout.write('\nsinks written (content not shown):\n');
    const files = (await readdir(join(dir, 'secrets'))).sort();
    for (const file of files) {
      const info = await stat(join(dir, 'secrets', file));
      process.stdout.write(
        `  ${relative(dir, join(dir, 'secrets', file))}  mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}  ${info.size} bytes\n`,
      );
    }

    process.stdout.write('\n$ token-rotator once   # again: nothing is due any more\n');
    const second = await runCli(['once', ...args], dir);
    process.stdout.write(second.stdout);

    process.stdout.write(
      '\n$ rm secrets/query-dashboard.env   # a pod restart emptied the volume\n$ token-rotator once   # delivers the held secret again: no new token\n',
    );
    const before = emulator.requests.filter((r) => r.op === 'regenerate').length;
    await rm(join(dir, 'secrets/query-dashboard.env'));
    const third = await runCli(['once', ...args], dir);
    process.stdout.write(third.stdout);
    const repairRegenerates = emulator.requests.filter((r) => r.op === 'regenerate').length - before;

    const regenerates = emulator.requests.filter((r) => r.op === 'regenerate').length;
    process.stdout.write(
      `\nregenerate requests the service received: ${regenerates} (${repairRegenerates} for the repair); exit codes: ${first.code}, ${second.code}, ${third.code}\n`,
    );
    process.exitCode = first.code || second.code || third.code;
  } finally {
    await emulator.close();
    if (keep) process.stdout.write(`kept ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await main();
