import { createServer, type Server } from 'node:http';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { emulatorSecrets, leakCheckedOutputs, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { expectNoFragment } from '../helpers/leaks.js';
import { itemsOf } from '../helpers/output-items.js';

/**
 * Programs that print the secret they were given the ways a careless push script would, to stderr,
 * and fail: so that what they printed becomes the failure everyone sees (issue 20, finding 7).
 */
const PRINTERS: Record<string, { command: string; format?: 'raw' | 'json' }> = {
  folded: { command: 'fold -w 8 >&2' },
  'folded narrow': { command: 'fold -w 3 >&2' },
  'folded, CRLF': { command: "fold -w 6 | sed 's/$/\\r/' >&2" },
  base64: { command: 'base64 -w 0 >&2' },
  'base64 wrapped': { command: 'base64 -w 76 >&2', format: 'json' },
  'base64 wrapped narrow': { command: 'base64 -w 12 >&2' },
  hex: { command: 'od -An -tx1 >&2' },
  prefix: { command: 'head -c 12 >&2' },
  middle: { command: 'cut -c 14-29 >&2' },
  suffix: { command: 'tail -c 10 >&2' },
  'json, folded': { command: 'fold -w 7 >&2', format: 'json' },
};

let receiver: Server;
let receiverUrl: string;
const received: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += String(c)));
    req.on('end', () => {
      received.push(text);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const fx = useCliFixture({ env: () => ({ HOOK_URL: receiverUrl }) });

/** A sink whose program prints what it was given and fails: the failed write is shown. */
const failingWrite = (printer: string) => ['sh', '-c', `${printer}; exit 1`];
/** A sink that stores what it was given, but whose read-back prints it and fails: the failed verification is shown. */
const failingRead = (printer: string, file: string) => ({
  command: ['sh', '-c', `cat > ${file}`],
  read: ['sh', '-c', `test -f ${file} || exit 0; ${printer} < ${file}; exit 1`],
});

it('masks a secret a program printed wrapped, encoded or cut: in the table, --json, status, the state, the logs and notifications', async () => {
  const printers = Object.values(PRINTERS);
  const add = (name: string) => fx.emulator.store.add({ name, expiresAt: new Date(Date.now() + 60 * 86400_000) });
  const tokens = [
    ...printers.map(({ command, format = 'raw' }, i) => ({
      name: `written-${i}`,
      id: add(`written-${i}`).id,
      sinks: [{ type: 'exec', command: failingWrite(command), format }],
    })),
    ...printers.map(({ command, format = 'raw' }, i) => ({
      name: `read-${i}`,
      id: add(`read-${i}`).id,
      sinks: [{ type: 'exec', ...failingRead(command, `read-${i}.token`), format }],
    })),
  ];
  await writePolicy(fx.dir, { version: 1, notifications: [{ type: 'webhook', urlFrom: 'HOOK_URL' }], tokens });
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  };

  const table = await cli('once');
  expect(table.code, table.stderr).toBe(1);
  // The second run delivers (or verifies) the same staged secrets, which the programs print again.
  const json = await cli('once', '--json');
  expect(json.code, json.stderr).toBe(1);
  const status = await cli('status', '--json');

  // What failed is still said, and that the program said something: only the secret is gone.
  const said = /through exec sh -c .* failed: the program exited with 1: .*\[REDACTED\]/;
  const outcomes = itemsOf(json.stdout) as Array<{
    name: string;
    result: string;
    sinks: Array<{ error?: string }>;
    error?: { message: string };
  }>;
  expect(outcomes.map((o) => o.result)).toEqual(tokens.map(() => 'failed'));
  for (const outcome of outcomes) {
    const message = outcome.name.startsWith('written-') ? outcome.sinks[0]!.error : outcome.error?.message;
    expect(message, outcome.name).toMatch(said);
  }
  // Each place the failure is shown or kept has it, so that the sweep below reads what was said.
  expect(table.stdout.match(new RegExp(said, 'g'))).toHaveLength(tokens.length);
  const statuses = itemsOf(status.stdout) as Array<{ lastError: { message: string } | null }>;
  expect(statuses.map((s) => s.lastError?.message)).toEqual(tokens.map(() => expect.stringMatching(said)));
  expect(received.filter((body) => body.includes('could not be read back') && said.test(body)).length).toBeGreaterThanOrEqual(
    printers.length,
  );
  // Runs of 10: the shortest piece a printer above shows is 10 characters (tail -c 10), and with ~50
  // secrets against the state's ids and fingerprints, runs of 8 hex characters matched by chance in
  // about one run in a hundred (measured by simulation); the scrubber's own test checks runs of 8.
  expectNoFragment(
    { ...(await leakCheckedOutputs(fx.dir, [table, json, status])), notifications: received.join('\n') },
    emulatorSecrets(fx.emulator),
    10,
  );
});
