import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { envFileText, startEmulator } from 'token-rotator-emulator';
import { stringify } from 'yaml';

/**
 * The installed product's own program, found through its package (as an installed user's would be),
 * never by a path into its sources: the demo runs token-rotator as a user does.
 */
function productBin(): string {
  const manifest = fileURLToPath(import.meta.resolve('token-rotator/package.json'));
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), bin['token-rotator']!);
}

const CLI = productBin();
const keep = process.argv.includes('--keep');

/**
 * `token-rotator <args>` as a real subprocess. Its stdout is the demo's own: the product sees the
 * terminal (or the pipe) and prints its tables for it, so the demo imports nothing of the product.
 */
function runCli(args: string[], cwd: string): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        PATH: process.env.PATH ?? '',
        ROTATOR_LOG_LEVEL: 'warn',
        ...(process.env.NO_COLOR ? { NO_COLOR: process.env.NO_COLOR } : {}),
      },
    });
    child.once('error', fail);
    child.once('close', (code) => done(code ?? 1));
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
    // A state key, as a real setup has: a staged secret is sealed in the journal, never plaintext.
    const env = { ...emulator.rotatorEnv(), ROTATOR_STATE_DIR: join(dir, 'state'), ROTATOR_STATE_KEY: randomBytes(32).toString('base64') };
    await writeFile(join(dir, 'rotator.env'), envFileText(env), { mode: 0o600 });
    const args = ['--config', 'rotation.yaml', '--dotenv', 'rotator.env'];
    // The tokens that are not due are already deployed, as they would be: their first run adopts them.
    await mkdir(join(dir, 'secrets'), { recursive: true, mode: 0o700 });
    const secretOf = (id: string) => emulator.store.get(id)!.secret;
    await writeFile(join(dir, 'secrets/query-dashboard.env'), `AXIOM_TOKEN=${secretOf('dash-001')}\n`, { mode: 0o600 });
    await writeFile(join(dir, 'secrets/legacy-export.token'), secretOf('legacy-001'), { mode: 0o600 });

    process.stdout.write(`token-rotator demo in ${dir}\nemulator: ${emulator.apiUrl} (OAuth issuer ${emulator.issuer})\n\n`);
    process.stdout.write('$ token-rotator once --config rotation.yaml --dotenv rotator.env\n');
    const first = await runCli(['once', ...args], dir);

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

    process.stdout.write(
      '\n$ rm secrets/query-dashboard.env   # a pod restart emptied the volume\n$ token-rotator once   # delivers the held secret again: no new token\n',
    );
    const before = emulator.requests.filter((r) => r.op === 'regenerate').length;
    await rm(join(dir, 'secrets/query-dashboard.env'));
    const third = await runCli(['once', ...args], dir);
    const repairRegenerates = emulator.requests.filter((r) => r.op === 'regenerate').length - before;

    const regenerates = emulator.requests.filter((r) => r.op === 'regenerate').length;
    process.stdout.write(
      `\nregenerate requests the service received: ${regenerates} (${repairRegenerates} for the repair); exit codes: ${first}, ${second}, ${third}\n`,
    );
    process.exitCode = first || second || third;
  } finally {
    await emulator.close();
    if (keep) process.stdout.write(`kept ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await main();
