import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { openRotationDeps } from '../../src/compose/rotation-deps.js';
import { readEnvironment, readSettings } from '../../src/config/env.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import { createLogger } from '../../src/log/logger.js';
import { rotateToken } from '../../src/rotation/rotate-token.js';
import { writeEmulatorEnv } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emulator: Emulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator();
  dir = await makeTempDir();
});
afterAll(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

it('scheduled checks back off after failures (1 min, 2 min, ...), a success resets it, and an emergency rotation ignores it', async () => {
  const token = emulator.store.add({ name: 'flaky', expiresAt: new Date(Date.now() + 86400_000) });
  const envFile = await writeEmulatorEnv(emulator, dir);
  const settings = readSettings(readEnvironment({}, { envFile, cwd: dir }), dir);
  const [policy] = parsePolicy(
    `version: 1\ntokens: [{ name: flaky, id: "${token.id}", sinks: [{ type: file, path: flaky.token }] }]`,
    join(dir, 'rotation.yaml'),
  ).tokens;
  const clock = fixedClock(new Date());
  const { deps } = await openRotationDeps(settings, createLogger({ level: 'silent' }), clock);
  const scheduled = () => rotateToken(policy!, deps, { respectBackoff: true });
  const sent = () => emulator.requests.filter((r) => r.op === 'regenerate' && r.id === token.id).length;

  emulator.faults.add({ op: 'regenerate', id: token.id, times: 2, action: { kind: 'status', status: 403 } });
  expect((await scheduled()).action).toBe('failed');
  expect(await scheduled()).toMatchObject({
    action: 'skipped',
    check: 'backoff',
    reason: expect.stringMatching(/after 1 failed attempt\(s\)/),
  });
  expect(sent()).toBe(1);

  clock.advance(61_000);
  expect((await scheduled()).action).toBe('failed'); // second failure: now two minutes
  clock.advance(61_000);
  expect((await scheduled()).check).toBe('backoff');
  expect(sent()).toBe(2);

  // an emergency rotation does not wait, and its success resets the count
  expect((await rotateToken(policy!, deps, { force: { reason: 'test' } })).action).toBe('rotated');
  expect(sent()).toBe(3);
  expect((await scheduled()).check).not.toBe('backoff');
});
