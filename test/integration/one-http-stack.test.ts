import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

import { envFileText } from 'token-rotator-emulator';
import { describe, expect, it } from 'vitest';

import { runCli, writeTokenPolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

/**
 * Loaded with `--import` before the CLI: counts what reaches Node's global `fetch` (undici) and
 * every WebAssembly compilation (undici compiles its HTTP parser on its first connection), and
 * writes the counts when the process exits. It lets `fetch` work, so a rotation that used it would
 * still succeed and be counted.
 */
const PROBE = `
import { writeFileSync } from 'node:fs';
const counts = { fetch: 0, wasm: 0 };
const realFetch = globalThis.fetch;
globalThis.fetch = (...args) => { counts.fetch++; return realFetch(...args); };
for (const name of ['compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) {
  const real = WebAssembly[name];
  if (real) WebAssembly[name] = (...args) => { counts.wasm++; return real.apply(WebAssembly, args); };
}
const RealModule = WebAssembly.Module;
WebAssembly.Module = new Proxy(RealModule, { construct(target, args) { counts.wasm++; return Reflect.construct(target, args); } });
process.on('exit', () => writeFileSync(process.env.HTTP_PROBE_OUT, JSON.stringify(counts)));
`;

const DAY = 24 * 3600_000;

describe('one HTTP stack: the authorization server is reached through got, never the global fetch', () => {
  const fx = useCliFixture();

  it('a rotation with OAuth discovery calls no global fetch and compiles no WebAssembly', async () => {
    const due = fx.emulator.store.add({ name: 'due', expiresAt: new Date(Date.now() + 2 * DAY) });
    await writeTokenPolicy(fx.dir, 'due', due.id, [{ type: 'file', path: 'secrets/due.token' }]);
    const probe = join(fx.dir, 'probe.mjs');
    await writeFile(probe, PROBE);
    const out = join(fx.dir, 'probe.json');
    const result = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
      cwd: fx.dir,
      env: { NODE_OPTIONS: `--import=${probe}`, HTTP_PROBE_OUT: out },
    });
    fx.results.push(result);
    expect(result.code, result.stderr).toBe(0);
    // the access token came from the emulator's authorization server, the rotation went through
    expect(fx.emulator.requests.some((r) => r.op === 'regenerate' && r.status === 200)).toBe(true);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual({ fetch: 0, wasm: 0 });
  });

  it('the token request and the API calls share one connection', async () => {
    // A TCP relay in front of the emulator counts the connections the CLI opens; the bare token
    // endpoint is used, as discovery through the relay would name the emulator's own address.
    let connections = 0;
    const upstream = new URL(fx.emulator.apiUrl);
    const relay = createServer((socket) => {
      connections++;
      const target = connect(Number(upstream.port), upstream.hostname);
      socket.pipe(target).pipe(socket);
      socket.on('error', () => target.destroy());
      target.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const at = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
      const due = fx.emulator.store.add({ name: 'due', expiresAt: new Date(Date.now() + 2 * DAY) });
      await writeTokenPolicy(fx.dir, 'due', due.id, [{ type: 'file', path: 'secrets/due.token' }]);
      const envFile = join(fx.dir, 'relay.env');
      const env = {
        ROTATOR_API_URL: at + upstream.pathname.replace(/\/$/, ''),
        ROTATOR_OAUTH_TOKEN_URL: at + new URL(fx.emulator.tokenEndpoint).pathname,
        ROTATOR_OAUTH_CLIENT_ID: fx.emulator.client.clientId,
        ROTATOR_OAUTH_CLIENT_SECRET: fx.emulator.client.clientSecret!,
        ROTATOR_STATE_DIR: join(fx.dir, 'state'),
        ROTATOR_STATE_KEY: randomBytes(32).toString('base64'),
      };
      await writeFile(envFile, envFileText(env), { mode: 0o600 });
      const result = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', envFile], { cwd: fx.dir });
      fx.results.push(result);
      expect(result.code, result.stderr).toBe(0);
      expect(fx.emulator.requests.filter((r) => r.op === 'regenerate' && r.status === 200)).toHaveLength(1);
      expect(connections).toBe(1);
    } finally {
      relay.close();
    }
  });
});
