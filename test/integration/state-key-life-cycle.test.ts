import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');

/**
 * The state key's life cycle, as an operator runs it: set one where there was none, change it with
 * the old one given as previous, drop the previous one. None of it may cost a regenerate or a
 * restart; a key that opens nothing is a configuration error, never a rotation.
 */
describe('changing the state key', () => {
  const fx = useCliFixture();

  async function once(env: Record<string, string> = {}): Promise<CliResult> {
    const result = await runCli(['once', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }
  const regenerates = () => fx.emulator.requests.filter((r) => r.op === 'regenerate').length;
  const record = async () =>
    JSON.parse(await readFile(join(fx.dir, 'state/tokens/ingest.json'), 'utf8')) as {
      secret: { value: { sealed?: { kid: string }; plain?: string } };
    };

  it('none, then a key (with previous "none" once), then a new key with the old as previous, then the old dropped: zero regenerates; a wrong key exits 2', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 20 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    // The fixture's env file sets a key: an empty variable in the environment wins over it.
    const first = await once({ ROTATOR_STATE_KEY: '' });
    expect(first.code, first.stderr).toBe(0);
    expect(regenerates(), 'first sight with an empty sink: the one new token').toBe(1);
    const delivered = await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8');
    expect((await record()).secret.value.plain).toBeDefined();

    // A plaintext record where a key is set could have been planted: refused until the operator
    // says, for one run, that state no key authenticates is theirs.
    const refused = await once({ ROTATOR_STATE_KEY: key(1) });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/not authenticated by the state key and holds a plaintext secret.*ROTATOR_STATE_KEY_PREVIOUS=none/);
    expect((await record()).secret.value.plain, 'a refused record stays as it is').toBeDefined();
    const set = await once({ ROTATOR_STATE_KEY: key(1), ROTATOR_STATE_KEY_PREVIOUS: 'none' });
    expect(set.code, set.stderr).toBe(0);
    const sealedOnce = (await record()).secret.value.sealed;
    expect(sealedOnce?.kid).toMatch(/^[\w-]{12}$/);

    const changed = await once({ ROTATOR_STATE_KEY: key(2), ROTATOR_STATE_KEY_PREVIOUS: `${key(9)}, ${key(1)}` });
    expect(changed.code, changed.stderr).toBe(0);
    expect((await record()).secret.value.sealed?.kid).not.toBe(sealedOnce?.kid);
    expect((await record()) as { mac?: { kid: string } }).toMatchObject({ mac: { kid: (await record()).secret.value.sealed?.kid } });

    await unlink(join(fx.dir, 'secrets/ingest.token'));
    const dropped = await once({ ROTATOR_STATE_KEY: key(2) });
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toMatch(/ingest\s+redeliver\s/);
    expect(await readFile(join(fx.dir, 'secrets/ingest.token'), 'utf8')).toBe(delivered);

    const wrong = await once({ ROTATOR_STATE_KEY: key(3) });
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stdout + wrong.stderr).toMatch(/ROTATOR_STATE_KEY_PREVIOUS/);
    expect(regenerates()).toBe(1);
  });

  it('previous keys (or none) without a current key are refused: what a run writes would be unauthenticated', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 20 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    for (const previous of [key(1), 'none']) {
      const result = await once({ ROTATOR_STATE_KEY: '', ROTATOR_STATE_KEY_PREVIOUS: previous });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/env\.ROTATOR_STATE_KEY_PREVIOUS: needs ROTATOR_STATE_KEY/);
    }
    expect(fx.emulator.requests).toEqual([]);
  });

  it('a malformed previous key is named with its place, before any network call', async () => {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 20 * DAY) });
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
    const result = await once({ ROTATOR_STATE_KEY: key(2), ROTATOR_STATE_KEY_PREVIOUS: `${key(1)},not-a-key` });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/env\.ROTATOR_STATE_KEY_PREVIOUS\[1\]/);
    expect(fx.emulator.requests).toEqual([]);
  });
});
