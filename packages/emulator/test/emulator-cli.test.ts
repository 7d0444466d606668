import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The built bin, as `npx token-rotator-emulator` runs it (`npm run build:all` builds it). */
const BIN = resolve(import.meta.dirname, '../dist/main.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function emulator(args: string[], cwd: string): Promise<Result> {
  return new Promise((done) =>
    execFile(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

/** A usage error: exit 2, one problem named with its option, no stack trace, nothing on stdout. */
function expectRefused(result: Result, problem: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^token-rotator-emulator: 1 configuration problem:\n/);
  expect(result.stderr).toMatch(problem);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-rotator-emulator-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('token-rotator-emulator', () => {
  it('--help lists its options, examples that use its own name, and its exit codes', async () => {
    const result = await emulator(['--help'], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: token-rotator-emulator \[options\]/);
    for (const option of ['--seed <file>', '--env-out <file>', '--kubernetes <kubeconfig>', '--namespaces <list>']) {
      expect(result.stdout).toContain(option);
    }
    expect(result.stdout).toContain('\nExamples:\n  token-rotator-emulator --port 18464');
    expect(result.stdout).toMatch(/\nExit codes:\n {2}0 {2}stopped by Ctrl-C or SIGTERM\n {2}2 {2}usage error/);
  });

  it('refuses a port that is not a number', async () => {
    const result = await emulator(['--port', 'http'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("option '--port <port>' argument 'http' is invalid");
  });

  it('names a port in use as a usage error, with the option that gave it', async () => {
    const taken = createServer();
    await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening));
    const port = (taken.address() as { port: number }).port;
    try {
      expectRefused(
        await emulator(['--port', String(port)], dir),
        new RegExp(`--port: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`),
      );
    } finally {
      await new Promise<void>((closed) => taken.close(() => closed()));
    }
  });

  it('listens on loopback only: its control API has no authentication', async () => {
    expectRefused(await emulator(['--host', '0.0.0.0'], dir), /--host: the emulator has an unauthenticated control API/);
  });

  it.each([['Apps'], ['a'.repeat(64)], ['apps_1'], ['-apps']])('refuses the namespace %j, as the Kubernetes double would', async (name) => {
    expectRefused(
      await emulator(['--kubernetes', join(dir, 'kubeconfig'), '--namespaces', name], dir),
      new RegExp(`--namespaces: '${name}' is not a namespace name`),
    );
  });

  it('names a seed file problem at its path, and a YAML mistake at its line and column', async () => {
    await writeFile(join(dir, 'bad-key.yaml'), 'tokens:\n  - { name: a, expiresIn: soon }\n');
    expectRefused(await emulator(['--seed', 'bad-key.yaml'], dir), /seed\.tokens\[0\]\.expiresIn: 'soon' is not a duration/);
    await writeFile(join(dir, 'bad-yaml.yaml'), 'tokens:\n  - { name: a\n');
    const result = await emulator(['--seed', 'bad-yaml.yaml'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad-yaml\.yaml:\d+:\d+: /);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('refuses a token expiry past what a date can hold as a usage error, before it starts', async () => {
    await writeFile(join(dir, 'far-expiry.yaml'), 'tokens:\n  - { name: a, expiresIn: 99999999999999d }\n');
    expectRefused(
      await emulator(['--seed', 'far-expiry.yaml', '--port', '0'], dir),
      /seed\.tokens\[0\]\.expiresIn: '99999999999999d' is too long: a duration may be at most 36500d/,
    );
  });

  it('writes the settings for a rotator to a 0600 file, and never prints the client secret', async () => {
    await writeFile(join(dir, 'seed.yaml'), 'tokens:\n  - { id: tok-1, name: ingest, expiresIn: 2d }\n');
    const envFile = join(dir, 'emulator.env');
    const child = execFile(process.execPath, [BIN, '--seed', 'seed.yaml', '--env-out', 'emulator.env'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
    });
    let stdout = '';
    child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    try {
      await expect.poll(() => stdout, { timeout: 45_000 }).toContain('Ctrl-C to stop.');
      expect((await stat(envFile)).mode & 0o777).toBe(0o600);
      const secret = /^ROTATOR_OAUTH_CLIENT_SECRET=(.+)$/m.exec(await readFile(envFile, 'utf8'))?.[1];
      expect(secret).toBeTruthy();
      expect(stdout).not.toContain(secret);
      expect(stdout).toMatch(/^TOKEN {3}ID {5}EXPIRES\ningest {2}tok-1 {2}\d{4}-\d\d-\d\dT\d\d:\d\dZ$/m);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000); // starting the OAuth server on a loaded 2-core machine can take seconds: a wide margin
});
