import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { sinkTypes } from '../../src/sinks/registry.js';
import { policyProblems } from '../helpers/config-problems.js';

const FILE = '/etc/rotator/rotation.yaml';

const problems = (text: string) => policyProblems(text, FILE);

const valid = `
version: 1
defaults:
  renewBefore: 5d
  overlap: 30m
tokens:
  - name: ingest-prod
    id: abc123
    renewBefore: 10d
    sinks:
      - type: file
        path: secrets/ingest.token
  - name: dash
    id: def456
    lifetime: never
    maxAge: 90d
    sinks:
      - { type: file, path: /abs/dash.env, format: env, key: DASH_TOKEN, mode: "0640" }
`;

describe('parsePolicy', () => {
  it('normalises a valid policy: defaults merged, durations in ms, sink paths resolved against the policy folder', () => {
    const policy = parsePolicy(valid, FILE);
    expect(policy.tokens).toHaveLength(2);
    const [ingest, dash] = policy.tokens;
    expect(ingest!.settings).toEqual({
      renewBefore: { kind: 'duration', ms: 10 * 86400_000 },
      overlapMs: 30 * 60_000,
      lifetimeMs: 30 * 86400_000,
      maxAgeMs: undefined,
      onDrift: 'redeliver',
    });
    expect(ingest!.sinks[0]).toMatchObject({ type: 'file', path: '/etc/rotator/secrets/ingest.token', format: 'raw', mode: 0o600 });
    expect(dash!.settings.lifetimeMs).toBeNull();
    expect(dash!.settings.maxAgeMs).toBe(90 * 86400_000);
    expect(dash!.sinks[0]).toMatchObject({ path: '/abs/dash.env', format: 'env', envKey: 'DASH_TOKEN', mode: 0o640 });
  });

  it('gives each token its check schedule: its own, else the defaults, else every 15 minutes', () => {
    const policy = parsePolicy(
      `
version: 1
defaults: { schedule: "0 * * * *", timezone: Europe/Berlin }
tokens:
  - { name: a, id: "1", sinks: [{ type: file, path: a }] }
  - { name: b, id: "2", schedule: "*/10 * * * * *", jitter: 30s, sinks: [{ type: file, path: b }] }
`,
      FILE,
    );
    expect(policy.tokens.map((t) => t.schedule)).toEqual([
      { expression: '0 * * * *', timezone: 'Europe/Berlin', jitterMs: 0 },
      { expression: '*/10 * * * * *', timezone: 'Europe/Berlin', jitterMs: 30_000 },
    ]);
    expect(parsePolicy('version: 1\ntokens: [{ name: a, id: "1", sinks: [{ type: file, path: a }] }]', FILE).tokens[0]!.schedule).toEqual({
      expression: '*/15 * * * *',
      timezone: undefined,
      jitterMs: 0,
    });
  });

  it('refuses a schedule that is not cron and a zone that does not exist', () => {
    expect(problems('version: 1\ndefaults: { schedule: "every hour", timezone: Mars/Olympus }\ntokens: []')).toEqual([
      "defaults.schedule: 'every hour' has 2 fields; a cron schedule has 5 (minute hour day month weekday) or 6 (seconds first)",
      "defaults.timezone: 'Mars/Olympus' is not an IANA time zone such as Europe/Berlin or UTC",
    ]);
    expect(problems('version: 1\ntokens: [{ name: a, id: "1", schedule: "99 * * * *", sinks: [{ type: file, path: a }] }]')[0]).toMatch(
      /^tokens\[0\]\.schedule: '99 \* \* \* \*' is not a cron schedule/,
    );
  });

  it('accepts JSON', () => {
    const json = JSON.stringify({ version: 1, tokens: [{ name: 'a', id: '1', sinks: [{ type: 'file', path: 'a.token' }] }] });
    expect(parsePolicy(json, FILE).tokens[0]!.name).toBe('a');
  });

  it('reports every problem at once, each with its path', () => {
    const found = problems(`
version: 1
tokens:
  - name: a
    id: "1"
    sinks:
      - type: file
  - name: a
    id: "1"
    renewBefore: soon
    colour: blue
    sinks:
      - { type: carrier-pigeon, path: x }
      - { type: file, path: x, format: yaml }
`);
    expect(found).toEqual(
      expect.arrayContaining([
        'tokens[0].sinks[0].path: required',
        'tokens[1].renewBefore: \'soon\' is not a duration such as 90s, 15m, 1h30m, 7d, 2w or ISO 8601 P7D, or a share such as "33%"',
        'tokens[1].colour: unknown key (allowed: name, id, renewBefore, overlap, lifetime, maxAge, onDrift, schedule, timezone, jitter, reload, verify, sinks)',
        `tokens[1].sinks[0].type: unknown sink type "carrier-pigeon"; one of: ${Object.keys(sinkTypes).join(', ')}`,
        'tokens[1].sinks[1].format: must be one of: "raw", "env", "json"',
        // checks across tokens in the same pass, not only once the fields are right
        "tokens[1].name: 'a' is already used by tokens[0]; names must be unique",
        'tokens[1].id: the same token as tokens[0]; one token, one name',
      ]),
    );
    expect(found).toHaveLength(7);
  });

  it('reports cross-field problems after the shape is right: duplicates, unknown sink types, bad sink options', () => {
    const found = problems(`
version: 1
tokens:
  - { name: a, id: "1", sinks: [{ type: file, path: same.token }] }
  - name: a
    id: "1"
    sinks:
      - { type: carrier-pigeon, path: x }
      - { type: file, path: x, format: yaml }
      - { type: file, path: same.token }
      - { type: file, path: y, key: K }
      - { type: file, path: z, mode: "0644" }
`);
    expect(found).toEqual([
      'tokens[1].id: the same token as tokens[0]; one token, one name',
      "tokens[1].name: 'a' is already used by tokens[0]; names must be unique",
      `tokens[1].sinks[0].type: unknown sink type "carrier-pigeon"; one of: ${Object.keys(sinkTypes).join(', ')}`,
      'tokens[1].sinks[1].format: must be one of: "raw", "env", "json"',
      'tokens[1].sinks[2]: writes to the same place as tokens[0].sinks[0]',
      'tokens[1].sinks[3].key: only used with format: env',
      'tokens[1].sinks[4].mode: must not give other users access to a secret',
    ]);
  });

  it('refuses a renewBefore that is not shorter than the lifetime, which would rotate on every run', () => {
    expect(
      problems(`
version: 1
defaults: { renewBefore: 30d, lifetime: 30d }
tokens: [{ name: a, id: "1", sinks: [{ type: file, path: a }] }]
`),
    ).toEqual(['tokens[0].renewBefore (from defaults): 30d is not shorter than lifetime 30d: every new token would be due at once']);
  });

  it('refuses a share of the lifetime when the lifetime is never', () => {
    expect(
      problems(`
version: 1
tokens: [{ name: a, id: "1", renewBefore: "50%", lifetime: never, sinks: [{ type: file, path: a }] }]
`),
    ).toEqual(['tokens[0].renewBefore: a share of the lifetime needs a lifetime; lifetime is "never"']);
  });

  it('refuses a token without sinks: a rotated secret must go somewhere', () => {
    expect(problems('version: 1\ntokens: [{ name: a, id: "1", sinks: [] }]')).toEqual([
      'tokens[0].sinks: at least one sink is required: a rotated secret must be delivered somewhere',
    ]);
  });

  it.each([
    ['a wrong version', 'version: 2\ntokens: []', ['version: must be 1']],
    [
      'a name with a slash',
      'version: 1\ntokens: [{ name: "../x", id: "1", sinks: [{type: file, path: a}] }]',
      [expect.stringMatching(/^tokens\[0\]\.name: must start with a letter or digit/)],
    ],
    ['a list where a mapping belongs', 'version: 1\ndefaults: [1]\ntokens: []', ['defaults: expected object, got a list']],
    [
      'a share of 100%',
      'version: 1\ntokens: [{ name: a, id: "1", renewBefore: "100%", sinks: [{type: file, path: a}] }]',
      ['tokens[0].renewBefore: a share must be between 0% and 100%, exclusive'],
    ],
  ])('refuses %s', (_what, text, expected) => {
    expect(problems(text)).toEqual(expected);
  });

  it('names the line and column of a YAML syntax error', () => {
    const [first] = problems('version: 1\ntokens:\n  - name: a\n   id: b\n');
    expect(first).toMatch(/^\/etc\/rotator\/rotation\.yaml:\d+:\d+: /);
  });

  it('refuses duplicate keys instead of silently keeping the last', () => {
    expect(problems('version: 1\nversion: 1\ntokens: []')[0]).toMatch(/rotation\.yaml:2:1: .*unique/i);
  });
});
