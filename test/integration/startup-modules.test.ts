import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import * as nodeModule from 'node:module';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { VARIABLES } from '../../src/config/env.js';
import { CLI } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Goal 4 of issue 12: a command loads only what it uses. Each run is the built CLI in a child process
 * with a resolve hook (node:module registerHooks, preloaded with --import) that writes every module
 * it was asked for to a file at exit. Counts, not times: speed is measured by `npm run bench`.
 */
const RECORDER = `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    seen.add(resolved.url);
    return resolved;
  },
});
process.on('exit', () => writeFileSync(process.env.LOADED_OUT, [...seen].join('\\n')));
`;

const hooks = typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function';

let dir: string;

beforeAll(async () => {
  dir = await makeTempDir('token-rotator-startup-');
  await writeFile(join(dir, 'recorder.mjs'), RECORDER);
  await writeFile(
    join(dir, 'rotation.yaml'),
    [
      'version: 1',
      'tokens:',
      '  - name: ingest',
      '    id: ingest-1',
      '    sinks:',
      '      - type: file',
      '        path: secrets/ingest.token',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'rotator.env'),
    [
      'ROTATOR_API_URL=http://127.0.0.1:9',
      'ROTATOR_OAUTH_TOKEN_URL=http://127.0.0.1:9/oauth/token',
      'ROTATOR_OAUTH_CLIENT_ID=test',
      'ROTATOR_OAUTH_CLIENT_SECRET=not-a-secret',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages (by their folder under node_modules) and built files of ours a CLI run loaded. */
async function loaded(args: string[], name: string): Promise<{ code: number; stdout: string; packages: Set<string>; ours: string[] }> {
  const out = join(dir, `${name}.loaded`);
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((done) => {
    execFile(
      process.execPath,
      ['--import', join(dir, 'recorder.mjs'), CLI, ...args],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', LOADED_OUT: out }, timeout: 60_000 },
      (error, stdout) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout }),
    );
  });
  const urls = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
  const packages = new Set(urls.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []));
  const ours = urls.flatMap((url) => /\/dist\/(.+\.js)$/.exec(url)?.[1] ?? []).filter((file) => !file.includes('node_modules'));
  return { code, stdout, packages, ours };
}

describe.skipIf(!hooks)('start-up: what each command loads', () => {
  it('--version loads nothing but the entry point, its Node check and the version reader: no command line parser, no command', async () => {
    const { code, stdout, packages, ours } = await loaded(['--version'], 'version');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect([...packages]).toEqual([]);
    expect(ours).toEqual(['cli/main.js', 'supported-node.js', 'cli/start.js', 'version.js']);
  });

  it('--help loads the parser and the help text, and nothing a command needs', async () => {
    const { code, stdout, packages, ours } = await loaded(['--help'], 'help');
    expect(code).toBe(0);
    expect(stdout).toContain('Exit codes:');
    expect([...packages]).toEqual(['commander']);
    expect(ours.filter((file) => file.startsWith('cli/commands/'))).toEqual([]);
    expect(ours).not.toContain('config/env.js');
  });

  it("a command's --help shows its environment without loading the settings readers", async () => {
    const { code, stdout, packages } = await loaded(['daemon', '--help'], 'daemon-help');
    expect(code).toBe(0);
    expect(stdout).toContain('ROTATOR_LISTEN');
    expect([...packages]).toEqual(['commander']);
  });

  it('validate (no --online) loads neither the HTTP clients, the logger nor the daemon', async () => {
    const { code, packages, ours } = await loaded(['validate', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'], 'validate');
    expect(code).toBe(0);
    // What it needs: the policy's schema and format.
    expect(packages).toContain('zod');
    expect(packages).toContain('yaml');
    for (const unused of [
      'got',
      'openid-client',
      'oauth4webapi',
      'jose',
      'pino',
      'pino-pretty',
      'prom-client',
      'p-limit',
      'http2-wrapper',
    ]) {
      expect(packages, unused).not.toContain(unused);
    }
    for (const unused of ['cli/online-checks.js', 'notify/notifier.js', 'auth/private-key.js', 'api/token-service-client.js']) {
      expect(ours, unused).not.toContain(unused);
    }
    expect(ours.filter((file) => file.startsWith('daemon/'))).toEqual([]);
    expect(ours.filter((file) => file.startsWith('cli/commands/'))).toEqual(['cli/commands/validate.js']);
  });

  it('rbac reads the policy and the environment alone: no HTTP client, no Kubernetes client, no logger', async () => {
    const { code, stdout, packages, ours } = await loaded(
      ['rbac', '--config', 'rotation.yaml', '--dotenv', 'rotator.env', '--namespace', 'rotator'],
      'rbac',
    );
    expect(code).toBe(0);
    expect(stdout).toContain('# Nothing to grant');
    for (const unused of ['got', 'openid-client', 'pino', 'http2-wrapper', 'kubernetes-models'])
      expect(packages, unused).not.toContain(unused);
    for (const unused of ['kubernetes/client.js', 'state/backends/kubernetes/state-objects.js']) expect(ours, unused).not.toContain(unused);
    expect(ours.filter((file) => file.startsWith('cli/commands/'))).toEqual(['cli/commands/rbac.js']);
  });

  it('JSON logs do not load pino-pretty', async () => {
    // A command that logs (status, with no state yet), on a pipe: JSON lines.
    const { packages } = await loaded(['status', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'], 'status');
    expect(packages).toContain('pino');
    expect(packages).not.toContain('pino-pretty');
  });
});

describe('start-up: the help text, without the settings readers', () => {
  it('lists every variable of VARIABLES, in its order', async () => {
    const { VARIABLES_READ } = await import('../../src/cli/help/environment.js');
    const local: readonly string[] = VARIABLES_READ.local;
    expect(local).toEqual(VARIABLES.filter((v) => local.includes(v)));
    expect([...VARIABLES_READ.daemon].sort()).toEqual([...VARIABLES].sort());
  });
});
