import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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
});
