import { PassThrough } from 'node:stream';

import { expect, it } from 'vitest';

import { run } from '../../src/cli/run.js';
import { writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const fx = useCliFixture();

/** `rotate` in-process, on a terminal, answering the prompt. */
async function rotateAnswering(answer: string, ...args: string[]) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  let stdout = '';
  let stderr = '';
  const running = run(['rotate', ...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], {
    stdin,
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {},
    cwd: fx.dir,
  });
  // The prompt is written before the answer is read: wait for it rather than for a time.
  while (!stderr.includes('[y/N]')) await new Promise((resolve) => setImmediate(resolve));
  stdin.write(`${answer}\n`);
  const code = await running;
  fx.results.push({ code, stdout, stderr });
  return { code, stdout, stderr };
}

it('without a flag, the prompt and the output say the leaked token keeps working for the overlap, and how to end it now', async () => {
  const token = fx.emulator.store.add({ name: 'leaked', expiresAt: new Date(Date.now() + 60 * DAY) });
  await writePolicy(fx.dir, {
    version: 1,
    defaults: { overlap: '1h' },
    tokens: [{ name: 'leaked', id: token.id, sinks: [{ type: 'file', path: 'secrets/leaked.token' }] }],
  });

  const declined = await rotateAnswering('n', 'leaked');
  expect(declined.code).toBe(0);
  expect(declined.stderr).toMatch(
    /Rotate leaked now\? the current token of leaked keeps working until \d{4}-\d\d-\d\dT\d\d:\d\dZ at most \(overlap 1h, from the policy\); use --revoke-now to end it now\. \[y\/N\]/,
  );
  expect(declined.stderr).toContain('nothing done');
  expect(fx.emulator.requests.filter((r) => r.op === 'regenerate')).toHaveLength(0);

  const accepted = await rotateAnswering('y', 'leaked');
  expect(accepted.code, accepted.stderr).toBe(0);
  expect(accepted.stdout).toMatch(
    new RegExp(
      `the replaced token ${token.id} of leaked keeps working until \\S+Z \\(overlap 1h\\); \`token-rotator rotate leaked --revoke-now\` ends it now`,
    ),
  );
});
