import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import * as nodeModule from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { VARIABLES } from '../../src/config/env.js';
import { CLI } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
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

/**
 * What each built file holds, from esbuild's metafile (scripts/bundle.mjs): a chunk of the bundle
 * holds exactly the modules reachable from its entry set, so "loaded the chunk" is "loaded each of
 * its inputs", and this mapping is exact.
 */
interface BundleMeta {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
}

const DIST = resolve(dirname(CLI), '..');

/** The modules (src/…ts, node_modules/…) a loaded file stands for: a bundle file's inputs, else itself. */
function modulesOf(url: string, meta: BundleMeta): string[] {
  if (!url.startsWith('file:')) return [];
  const path = fileURLToPath(url);
  const output = meta.outputs[relative(resolve(DIST, '..'), path)];
  return output ? Object.keys(output.inputs) : [path];
}

/**
 * The packages (by their folder under node_modules) and modules of ours (as src-relative .js) a CLI
 * run loaded; `stop`, for a command that runs until stopped, says when to send it SIGTERM.
 */
async function loaded(
  args: string[],
  name: string,
  stop?: () => Promise<void>,
): Promise<{ code: number; stdout: string; files: string[]; modules: string[]; packages: Set<string>; ours: string[] }> {
  const out = join(dir, `${name}.loaded`);
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((done) => {
    const child = execFile(
      process.execPath,
      ['--import', join(dir, 'recorder.mjs'), CLI, ...args],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', LOADED_OUT: out }, timeout: 60_000 },
      (error, stdout) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout }),
    );
    void stop?.().then(() => child.kill('SIGTERM'));
  });
  const meta = JSON.parse(await readFile(join(DIST, 'bundle-meta.json'), 'utf8')) as BundleMeta;
  const urls = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
  const files = urls.flatMap((url) => (url.startsWith('file:') ? [fileURLToPath(url)] : []));
  const modules = urls.flatMap((url) => modulesOf(url, meta));
  const packages = new Set(modules.flatMap((module) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1] ?? []));
  const ours = [
    ...new Set(
      modules
        .flatMap((module) => /^src\/(.+)\.ts$/.exec(module)?.[1] ?? /\/dist\/(.+)\.js$/.exec(module)?.[1] ?? [])
        .map((file) => `${file}.js`),
    ),
  ].filter((file) => !file.includes('node_modules'));
  return { code, stdout, files, modules, packages, ours };
}

describe.skipIf(!hooks)('start-up: what each command loads', () => {
  it('--version loads nothing but the entry point, its Node check and the version reader: no command line parser, no command', async () => {
    const { code, stdout, packages, ours } = await loaded(['--version'], 'version');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect([...packages]).toEqual([]);
    expect(ours.sort()).toEqual(['cli/main.js', 'cli/start.js', 'supported-node.js', 'version.js']);
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
    const { code, modules, packages, ours } = await loaded(
      ['validate', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'],
      'validate',
    );
    expect(code).toBe(0);
    // What it needs: the policy's schema and format.
    expect(packages).toContain('zod');
    // Of zod, what the schemas use: the bundle keeps the parts `import * as z` names, not the whole
    // `z` namespace with its 40 locales (0.37 of its 0.75 MB). English is the one the messages are in.
    const locales = modules.filter((module) => /node_modules\/zod\/v4\/locales\//.test(module));
    expect(locales.map((module) => module.replace(/.*\//, ''))).toEqual(['en.js']);
    // yaml, or js-yaml on the success path (issue 25's lower-peak policy reader)
    expect(packages.has('yaml') || packages.has('js-yaml'), [...packages].join(' ')).toBe(true);
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

  it('a daemon whose policy has no Kubernetes target loads neither the Kubernetes client nor the Event recorder, through its first check', async () => {
    const port = await freePort();
    // The first check fails (nothing listens at the token service's address), and its failure is
    // told: the path that records Kubernetes Events when a policy has Kubernetes targets.
    let failedOnce = false;
    const checked = async () => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const text = await fetch(`http://127.0.0.1:${port}/metrics`)
          .then((r) => r.text())
          .catch(() => '');
        failedOnce = /^token_rotator_checks_total\{token="ingest",result="failure"\} 1$/m.test(text);
        if (failedOnce) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const args = ['daemon', '--config', 'rotation.yaml', '--dotenv', 'rotator.env', '--listen', `127.0.0.1:${port}`];
    const { code, packages, ours } = await loaded(args, 'daemon-files', checked);
    expect(code).toBe(0);
    expect(failedOnce).toBe(true);
    expect(packages).toContain('prom-client');
    expect(ours).toContain('compose/kubernetes-events.js');
    for (const unused of ['kubernetes/client.js', 'kubernetes/events/event-recorder.js', 'kubernetes/events/event-series.js'])
      expect(ours, unused).not.toContain(unused);
  });

  it('JSON logs do not load pino-pretty', async () => {
    // A command that logs (status, with no state yet), on a pipe: JSON lines.
    const { packages } = await loaded(['status', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'], 'status');
    expect(packages).toContain('pino');
    expect(packages).not.toContain('pino-pretty');
  });
});

describe('start-up: the bundle', () => {
  it.skipIf(!hooks)(
    'validate reads its packages from the bundle: the only file under node_modules is commander, left out of it',
    async () => {
      const { code, files } = await loaded(['validate', '--config', 'rotation.yaml', '--dotenv', 'rotator.env'], 'validate-files');
      expect(code).toBe(0);
      const fromNodeModules = new Set(files.flatMap((file) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? []));
      expect([...fromNodeModules]).toEqual(['commander']);
    },
  );

  it('holds no emulator, demo, test hook, OAuth server or cloud SDK: those load from their own files, or not at all', async () => {
    const meta = JSON.parse(await readFile(join(DIST, 'bundle-meta.json'), 'utf8')) as BundleMeta;
    const inputs = Object.values(meta.outputs).flatMap((output) => Object.keys(output.inputs));
    expect(inputs).toContain('src/cli/commands/validate.ts');
    const forbidden =
      /^src\/(emulator|demo|testing)\/|node_modules\/(oidc-provider|@aws-sdk|@smithy|@google-cloud|google-gax|@grpc|@azure)\//;
    expect(inputs.filter((input) => forbidden.test(input))).toEqual([]);
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
