import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, seedSink, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const inDays = (d: number) => new Date(Date.now() + d * DAY);
const schema = JSON.parse(await readFile(resolve(import.meta.dirname, '../../schema/output.schema.json'), 'utf8')) as object;
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function envelopeOf(result: CliResult, kind: string) {
  const parsed = JSON.parse(result.stdout) as {
    apiVersion: string;
    kind: string;
    summary: Record<string, unknown>;
    items: Array<Record<string, unknown>>;
    problems: unknown[];
  };
  expect(validate(parsed), JSON.stringify(validate.errors, null, 2)).toBe(true);
  expect(parsed.apiVersion).toBe('token-rotator/v2');
  expect(parsed.kind).toBe(kind);
  return parsed;
}

describe('one JSON contract for every command', () => {
  const fx = useCliFixture();
  async function cli(...args: string[]) {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  it('plan, once, rotate, status and validate print the versioned envelope the shipped schema describes', async () => {
    const due = fx.emulator.store.add({ name: 'due', expiresAt: inDays(2) });
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(60) });
    const forever = fx.emulator.store.add({ name: 'forever', expiresAt: null });
    await seedSink(fx.dir, 'secrets/fine.token', fine.secret);
    await seedSink(fx.dir, 'secrets/forever.token', forever.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: ['due', 'fine', 'forever'].map((name, i) => ({
        name,
        id: [due.id, fine.id, forever.id][i],
        sinks: [{ type: 'file', path: `secrets/${name}.token` }],
      })),
    });

    const plan = envelopeOf(await cli('plan', '--json'), 'PlanResult');
    // The same words as the items' actions and results, and the count a CI gate reads, in every kind.
    expect(plan.summary).toEqual({ total: 3, rotate: 1, redeliver: 0, skip: 2, failed: 0, interrupted: 0, needsAttention: 0 });
    expect(plan.items.map((i) => [i.name, i.action, i.result, i.expiry])).toEqual([
      ['due', 'rotate', 'ok', 'expires'],
      ['fine', 'skip', 'ok', 'expires'],
      ['forever', 'skip', 'ok', 'never'],
    ]);
    // never: the service said so, and expiresAt is null
    expect(plan.items[2]).toMatchObject({ expiry: 'never', expiresAt: null });

    const once = envelopeOf(await cli('once', '--json'), 'RunResult');
    expect(once.summary).toEqual({ total: 3, rotate: 1, redeliver: 0, skip: 2, failed: 0, interrupted: 0, needsAttention: 0 });
    const rotated = once.items[0]!;
    expect(rotated).toMatchObject({ name: 'due', action: 'rotate', result: 'ok', id: due.id, needsAttention: false });
    expect(rotated.newId).not.toBe(due.id);
    expect(rotated.sinks).toEqual([
      { type: 'file', target: expect.stringContaining('secrets/due.token'), description: 'file secrets/due.token', result: 'created' },
    ]);
    expect(once.items.slice(1).map((i) => [i.action, i.result])).toEqual([
      ['skip', 'ok'],
      ['skip', 'ok'],
    ]);

    const rotate = envelopeOf(await cli('rotate', 'fine', '--yes', '--json'), 'RotateResult');
    expect(rotate.summary).toEqual({ total: 1, rotate: 1, redeliver: 0, skip: 0, failed: 0, interrupted: 0, needsAttention: 0 });
    expect(rotate.items[0]).toMatchObject({ name: 'fine', action: 'rotate', result: 'ok', id: fine.id });

    const status = envelopeOf(await cli('status', '--json'), 'Status');
    expect(status.summary).toEqual({ total: 3, ok: 3, attention: 0, unknown: 0, needsAttention: 0, driftNotKnown: 0 });
    expect(status.items.map((i) => [i.name, i.health, i.id])).toEqual([
      ['due', 'ok', rotated.newId],
      ['fine', 'ok', (rotate.items[0] as { newId: string }).newId],
      ['forever', 'ok', forever.id],
    ]);
    expect(status.items[2]).toMatchObject({ expiry: 'never', expiresAt: null, dueAt: expect.anything() });

    expect(envelopeOf(await cli('validate', '--json'), 'Validation')).toMatchObject({
      summary: { valid: true, online: false, total: 0, needsAttention: 0 },
      problems: [],
    });
    const online = envelopeOf(await cli('validate', '--online', '--json'), 'Validation');
    expect(online.items.length).toBeGreaterThan(0);
    expect(online.summary).toMatchObject({ total: online.items.length, needsAttention: 0 });

    // The tables say what the JSON says, in its words.
    const planTable = await cli('plan');
    expect(planTable.stdout).toMatch(/^fine\s+skip\s/m);
    expect(planTable.stdout).toMatch(/\n3 tokens: skip 3\n$/);
    const onceTable = await cli('once');
    expect(onceTable.stdout).toMatch(/^due\s+skip\s/m);
    expect(onceTable.stdout).toMatch(/\n3 tokens: skip 3\n$/);
  });

  it('a token never checked, or whose check failed, is unknown (not never), and status does not call it healthy', async () => {
    const fine = fx.emulator.store.add({ name: 'fine', expiresAt: inDays(60) });
    await seedSink(fx.dir, 'secrets/fine.token', fine.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        { name: 'fine', id: fine.id, sinks: [{ type: 'file', path: 'secrets/fine.token' }] },
        { name: 'ghost', id: 'no-such-token', sinks: [{ type: 'file', path: 'secrets/ghost.token' }] },
      ],
    });

    // before any run: nothing is known, and that is not healthy
    const before = await cli('status', '--json');
    expect(before.code).toBe(1);
    expect(envelopeOf(before, 'Status').items.map((i) => [i.health, i.expiry, 'expiresAt' in i, 'dueAt' in i])).toEqual([
      ['unknown', 'unknown', false, false],
      ['unknown', 'unknown', false, false],
    ]);
    const table = await cli('status');
    expect(table.stdout).toMatch(/fine\s+\S+\s+unknown\s+unknown\s+-\s+unknown/);
    const rows = table.stdout.split('\n').filter((line) => /^(fine|ghost)\s/.test(line));
    expect(rows).toHaveLength(2);
    expect(rows.join('\n')).not.toMatch(/never/);
    expect(table.stdout).toMatch(/\n2 tokens: unknown 2; 2 need attention\n$/);

    expect(envelopeOf(before, 'Status').summary).toMatchObject({ total: 2, unknown: 2, needsAttention: 2 });
    const planned = await cli('plan', '--json');
    expect(planned.code).toBe(1);
    expect(envelopeOf(planned, 'PlanResult').summary).toMatchObject({ total: 2, skip: 1, failed: 1, needsAttention: 1 });
    expect(envelopeOf(planned, 'PlanResult').items.map((i) => i.needsAttention)).toEqual([false, true]);
    const once = await cli('once', '--json');
    expect(once.code).toBe(1);
    expect(envelopeOf(once, 'RunResult').summary).toMatchObject({ total: 2, skip: 1, failed: 1, needsAttention: 1 });
    const ghost = envelopeOf(once, 'RunResult').items[1]!;
    expect(ghost).toMatchObject({ name: 'ghost', action: 'none', result: 'failed', expiry: 'unknown' });
    expect(ghost).not.toHaveProperty('expiresAt');
    const plan = envelopeOf(await cli('plan', '--json'), 'PlanResult');
    expect(plan.items[1]).toMatchObject({ name: 'ghost', action: 'none', result: 'failed', expiry: 'unknown' });

    const after = await cli('status', '--json');
    expect(after.code).toBe(1);
    const items = envelopeOf(after, 'Status').items;
    expect(items[0]).toMatchObject({ name: 'fine', health: 'ok', expiry: 'expires' });
    expect(items[1]).toMatchObject({ name: 'ghost', health: 'attention', expiry: 'unknown' });
    expect(items[1]).not.toHaveProperty('expiresAt');
  });

  /** A token due now whose one file sink cannot be written: a file is where its folder should be. */
  async function blockedFileSink(name: string, folder: string) {
    const token = fx.emulator.store.add({ name, expiresAt: inDays(1) });
    await writeFile(join(fx.dir, folder), 'a file in the way');
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name, id: token.id, sinks: [{ type: 'file', path: `${folder}/${name}.token` }] }],
    });
  }

  it('a failing sink is named once in the status and table text, with its own error', async () => {
    await blockedFileSink('s', 'blocked');
    const once = await cli('once');
    expect(once.code).toBe(1);
    expect(once.stdout).toMatch(/cannot write file blocked\/s.token: .*a file is in the way/);
    expect(once.stdout.match(/file blocked\/s.token/g)).toHaveLength(1);
    expect(once.stdout).toMatch(/^s\s+failed\s/m);
    expect(once.stdout).toMatch(/\n1 token: failed 1; 1 needs attention\n/);
  });

  it("gives a failure's code as one the schema lists", async () => {
    await blockedFileSink('j', 'in-the-way');
    const once = envelopeOf(await cli('once', '--json'), 'RunResult');
    expect(once.items[0]?.error).toMatchObject({ code: 'ERR_SINK' });
  });
});

describe('validate --json of a refused configuration', () => {
  const fx = useCliFixture();
  interface Refused {
    summary: Record<string, unknown>;
    problems: Array<{ path: string; message: string; line?: number; column?: number }>;
  }
  /** The envelope a CI step parses, with the text still on stderr and exit 2. */
  async function refused(args: string[], env: Record<string, string> = {}): Promise<Refused> {
    const result = await runCli(['validate', '--json', ...args], { cwd: fx.dir, env });
    fx.results.push(result);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/configuration problems?:/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const parsed = envelopeOf(result, 'Validation');
    expect(parsed.items).toEqual([]);
    return parsed as unknown as Refused;
  }
  const policy = (text: string) => writeFile(join(fx.dir, 'rotation.yaml'), text);

  it('gives schema problems and a destination named twice with the line and column of the entry they name', async () => {
    await policy(
      [
        'version: 1',
        'tokens:',
        '  - name: a',
        '    id: 123',
        '    sinks:',
        '      - type: file',
        '        pth: a.token',
        '  - name: b',
        '    id: "b1"',
        '    sinks: [{ type: file, path: shared.token }]',
        '  - name: c',
        '    id: "c1"',
        '    sinks: [{ type: file, path: shared.token }]',
        '',
      ].join('\n'),
    );
    const { summary, problems } = await refused(['--config', 'rotation.yaml', '--dotenv', fx.envFile]);
    expect(summary).toEqual({ policy: 'rotation.yaml', valid: false, online: false, total: 0, needsAttention: 4 });
    expect(problems).toEqual([
      { path: 'tokens[0].id', message: expect.stringContaining('expected string, got number'), line: 4, column: 5 },
      // a missing key: the entry it is missing from
      { path: 'tokens[0].sinks[0].path', message: 'required', line: 6, column: 9 },
      { path: 'tokens[0].sinks[0].pth', message: expect.stringContaining('unknown key'), line: 7, column: 9 },
      { path: 'tokens[2].sinks[0]', message: expect.stringContaining('tokens[1].sinks[0]'), line: 13, column: 13 },
    ]);
  });

  it("gives a YAML syntax error at the parser's line and column", async () => {
    await policy(['version: 1', 'tokens:', '  - name: a', '    id: [b1', '    sinks: []', ''].join('\n'));
    const { problems } = await refused(['--config', 'rotation.yaml', '--dotenv', fx.envFile]);
    // The path is the text's (file:line:column, as an editor opens it); line and column are the parser's.
    expect(problems).toEqual([
      { path: `${join(fx.dir, 'rotation.yaml')}:5:5`, message: expect.stringContaining('Flow sequence'), line: 5, column: 5 },
    ]);
  });

  it('gives environment problems without a line, and a variable the policy names at its line', async () => {
    await policy(
      [
        'version: 1',
        'tokens:',
        '  - name: a',
        '    id: "a1"',
        '    sinks: [{ type: file, path: a.token }]',
        '    reload:',
        '      - type: webhook',
        '        urlFrom: NOPE_RELOAD_URL',
        '',
      ].join('\n'),
    );
    const { problems } = await refused(['--config', 'rotation.yaml', '--dotenv', fx.envFile], { ROTATOR_STATE_BACKEND: 'nope' });
    expect(problems).toEqual([
      { path: 'env.ROTATOR_STATE_BACKEND', message: expect.stringContaining('must be one of') },
      { path: 'tokens[0].reload[0].urlFrom', message: 'NOPE_RELOAD_URL (or NOPE_RELOAD_URL_FILE) is not set', line: 8, column: 9 },
    ]);
  });

  it('gives an unreadable policy file and an unreadable dotenv file, without a line', async () => {
    const missing = await refused(['--config', 'missing.yaml', '--dotenv', fx.envFile]);
    expect(missing.summary).toEqual({ policy: 'missing.yaml', valid: false, online: false, total: 0, needsAttention: 1 });
    expect(missing.problems).toEqual([{ path: join(fx.dir, 'missing.yaml'), message: 'cannot read policy file: no such file' }]);

    // The dotenv file may name the policy (ROTATOR_CONFIG): unread, the policy is not known either.
    const dotenv = await refused(['--config', 'rotation.yaml', '--dotenv', 'nope.env', '--online']);
    expect(dotenv.summary).toEqual({ valid: false, online: false, total: 0, needsAttention: 1 });
    expect(dotenv.problems).toEqual([{ path: '--dotenv nope.env', message: expect.stringContaining('cannot read') }]);
  });

  it('gives a usage error (a flag, or a variable the command line checks) as a refusal too', async () => {
    await policy('version: 1\ntokens: []\n');
    for (const [args, env, path] of [
      [['--config', 'rotation.yaml'], { ROTATOR_LOG_FORMAT: 'xml' }, 'env.ROTATOR_LOG_FORMAT'],
      [['--config', 'rotation.yaml', '--log-format', 'xml'], {}, 'argv'],
      [['--config', 'rotation.yaml', '--onlin'], {}, 'argv'],
    ] as const) {
      const result = await runCli(['validate', '--json', ...args], { cwd: fx.dir, env });
      fx.results.push(result);
      expect(result.code, result.stderr).toBe(2);
      const parsed = envelopeOf(result, 'Validation') as unknown as Refused;
      expect(parsed.summary).toEqual({ valid: false, online: false, total: 0, needsAttention: 1 });
      expect(parsed.problems).toEqual([{ path, message: expect.stringMatching(/xml|onlin/) }]);
    }
  });
});
