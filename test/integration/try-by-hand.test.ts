import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { freePort } from '../helpers/free-port.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');

/** The README's "Try it by hand" section, and its shell blocks in order. */
async function section(): Promise<{ text: string; blocks: string[] }> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const text = readme.slice(readme.indexOf('## Try it by hand\n'), readme.indexOf('\n## ', readme.indexOf('## Try it by hand\n') + 1));
  return { text, blocks: [...text.matchAll(/```sh\n(.*?)```/gs)].map((m) => m[1]!) };
}

/** Ports that something else on a developer's machine likely holds. */
const COMMON_PORTS = [
  80, 443, 1080, 3000, 3001, 4200, 5000, 5173, 5432, 6379, 8000, 8008, 8080, 8081, 8443, 8888, 9000, 9090, 9093, 9100, 9200, 9464,
];

/**
 * The session with the README's ports replaced by free ones: a README session (or anything else)
 * on this machine may hold 18464 or 19464.
 */
async function onFreePorts(text: string, readmePorts: readonly number[]): Promise<string> {
  let replaced = text;
  for (const port of readmePorts) replaced = replaced.replaceAll(String(port), String(await freePort()));
  return replaced;
}

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('try-by-hand-');
  // `npx token-rotator…` as the installed package would run it: the built bins of this checkout.
  const bin = join(dir, 'bin');
  await mkdir(bin);
  await writeFile(
    join(bin, 'npx'),
    `#!/bin/sh\ncase "$1" in\n  token-rotator) shift; exec "${process.execPath}" "${root}/dist/cli/main.js" "$@" ;;\n` +
      `  token-rotator-emulator) shift; exec "${process.execPath}" "${root}/packages/emulator/dist/main.js" "$@" ;;\nesac\nexit 127\n`,
  );
  await chmod(join(bin, 'npx'), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('README "Try it by hand"', () => {
  it('installs the packed package in a folder of its own, and uses ports clear of common defaults', async () => {
    const { text, blocks } = await section();
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toMatch(/npm pack/);
    expect(blocks[0]).toMatch(/npm install \S+\.tgz/);
    const ports = [...text.matchAll(/(?:--port|--listen|localhost:)\s*(\d+)/g)].map((m) => Number(m[1]));
    expect(ports.length).toBeGreaterThan(2);
    for (const port of ports) expect(COMMON_PORTS, `port ${port}`).not.toContain(port);
  });

  it('shows a policy that is valid, and runs as written: every step succeeds, secrets stay out of git, what it starts it stops', async () => {
    const { text, blocks } = await section();
    const readmePorts = [...new Set([...text.matchAll(/--port\s+(\d+)|--listen\s+(\d+)/g)].map((m) => Number(m[1] ?? m[2])))];
    expect(readmePorts).toHaveLength(2);
    const bin = join(dir, 'bin');
    const work = join(dir, 'work');
    await mkdir(work);
    // Each step must succeed (set -e); job control on (set -m) as in a terminal; after `kill`, both jobs end with 0.
    // The session as written; before its last line (the kill), the jobs' pids, to wait for their exit codes.
    const lines = (await onFreePorts(blocks[2]!, readmePorts)).trimEnd().split('\n');
    const kill = lines.pop()!;
    expect(kill).toMatch(/^kill %2 %1\b/);
    const script =
      `set -em\n${blocks[1]}\n${lines.join('\n')}\n` +
      `emulator=$(jobs -p %1); daemon=$(jobs -p %2)\n${kill}\n` +
      `wait $daemon && echo "daemon exit 0" || echo "daemon exit $?"\n` +
      `wait $emulator && echo "emulator exit 0" || echo "emulator exit $?"\n` +
      `git check-ignore emulator.env .token-rotator secrets/ingest-prod.token\n`;
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(
        'bash',
        ['-c', script],
        { cwd: work, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }, timeout: 60_000 },
        (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(result.stdout).toMatch(/ingest-prod +rotate +tok-ingest ->/);
    expect(result.stdout).toMatch(/ingest-prod +skip /);
    expect(result.stdout).toMatch(/^token_rotator_token/m);
    expect(result.stdout).toContain('daemon exit 0');
    expect(result.stdout).toContain('emulator exit 0');
    expect(result.stdout.trim().split('\n').slice(-3)).toEqual(['emulator.env', '.token-rotator', 'secrets/ingest-prod.token']);
    const policy = parse(await readFile(join(work, 'rotation.yaml'), 'utf8')) as { tokens: unknown[] };
    expect(policy.tokens).toHaveLength(1);
  }, 90_000);

  it('stops waiting for the emulator as soon as it exits, and the emulator says why, when its port is taken', async () => {
    const { blocks } = await section();
    const [start, wait] = blocks[2]!.split('\n');
    // Waits until the emulator is up or its process has ended: no fixed bound to sit out.
    expect(wait).toMatch(/^while \[ ! -s emulator\.env \] && kill -0 \$! 2>\/dev\/null; do sleep [\d.]+; done/);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const readmePort = /--port (\d+)/.exec(start!)![1]!;
      const bin = join(dir, 'bin');
      const work = join(dir, 'taken');
      await mkdir(work);
      // The README's files, then its two lines as written but on the taken port. Were the loop to wait for a file
      // that never comes, the 60 s bound of execFile would end it, and the test would fail.
      const script = `${blocks[1]}\n${start!.replace(readmePort, String(port))}\n${wait!.replaceAll(readmePort, String(port))}\necho "done waiting"\n`;
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          'bash',
          ['-c', script],
          { cwd: work, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir }, timeout: 60_000 },
          (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : error ? 1 : 0, stdout, stderr }),
        ),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('done waiting');
      expect(result.stderr).toMatch(new RegExp(`--port: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 90_000);
});
