import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { destinationChecks } from '../../src/cli/online-destinations.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import { Secret } from '../../src/secret.js';
import { type SinkConfig, sinkTypesByName } from '../../src/sinks/registry.js';
import { openSinkSet, type SinkSet } from '../../src/sinks/sink-set.js';
import {
  README_ROLE,
  type SecretManagerDouble,
  startSecretManagerDouble,
} from '../doubles/gcp-secret-manager/start-secret-manager-double.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// grpc-js learns the roots it trusts when it loads: the double's certificate goes in before any import loads it.
const untrust = await vi.hoisted(async () => (await import('../doubles/gcp-secret-manager/trust.js')).trustDoubleCertificate());

/*
 * A project by id and by number are one project, which only Google knows: `validate` warns, and
 * `validate --online` asks the secret's name, which Google gives with the project's number.
 */

const PROJECT = 'identity-project';
const NUMBER = '737373737373';
const OTHER_NUMBER = '818181818181';
let d: SecretManagerDouble;
let dir: string;
let sinks: SinkSet<SinkConfig>;

beforeAll(async () => {
  dir = await makeTempDir();
  d = await startSecretManagerDouble({
    projects: [
      { id: PROJECT, number: NUMBER },
      { id: 'other-project', number: OTHER_NUMBER },
    ],
  });
  const key = join(dir, 'key.json');
  const account = d.serviceAccount('token-rotator', README_ROLE);
  d.grant(`serviceAccount:${account.client_email}`, { project: 'other-project' }, README_ROLE);
  await writeFile(key, JSON.stringify(account), { mode: 0o600 });
  sinks = openSinkSet(sinkTypesByName, {
    logger: silentLogger(),
    env: { GOOGLE_APPLICATION_CREDENTIALS: key },
    reference: () => undefined,
  });
});
afterAll(async () => {
  await sinks?.close();
  await d?.close();
  await rm(dir, { recursive: true, force: true });
  untrust();
});

const metaOf = () => ({ name: 't', id: 'id', expiresAt: null, rotationId: randomUUID(), rotatedAt: new Date() });

/** Two tokens, each with one secret of `projects`, as `validate` reads them. */
function policyOf(...sinks: Array<{ project: string; secret: string }>) {
  const tokens = sinks.map((sink, i) => ({
    name: `t${i}`,
    id: `id${i}`,
    sinks: [{ type: 'gcp-secret-manager', endpoint: d.endpoint, ...sink }],
  }));
  return parsePolicy(JSON.stringify({ version: 1, tokens }), join(dir, 'rotation.yaml'));
}

describe('a Google secret by project id and by project number', () => {
  it('is unknown while the secret does not exist, and one destination once it does', async () => {
    const secret = `s-${randomUUID().slice(0, 8)}`;
    const policy = policyOf({ project: PROJECT, secret }, { project: NUMBER, secret });
    expect(policy.warnings.map((w) => w.path)).toEqual(['tokens[1].sinks[0]']);

    expect(await destinationChecks(policy.tokens, sinks)).toEqual([
      {
        check: 'sink',
        target: 'tokens[0].sinks[0] and tokens[1].sinks[0]',
        result: 'not checked',
        note: expect.stringMatching(
          /^both are the secret .* if project identity-project is project number 737373737373; the service does not know gcp-secret-manager projects\/identity-project\/secrets\/s-/,
        ),
      },
    ]);

    await sinks.write(policy.tokens[0]!.sinks[0]!, new Secret('xaat-canary-gcp-identity'), metaOf(), {});
    const [check, ...rest] = await destinationChecks(policy.tokens, sinks);
    expect(rest).toEqual([]);
    expect(check).toEqual({
      check: 'sink',
      target: 'tokens[0].sinks[0] and tokens[1].sinks[0]',
      result: 'failed',
      note: expect.stringContaining(
        `one destination: projects/${NUMBER}/secrets/${secret} is both gcp-secret-manager projects/${PROJECT}/secrets/${secret} and gcp-secret-manager projects/${NUMBER}/secrets/${secret}`,
      ),
    });
  });

  it('is two destinations when Google names the projects apart', async () => {
    const secret = `s-${randomUUID().slice(0, 8)}`;
    const policy = policyOf({ project: PROJECT, secret }, { project: OTHER_NUMBER, secret });
    for (const token of policy.tokens) await sinks.write(token.sinks[0]!, new Secret('xaat-canary-gcp-apart'), metaOf(), {});
    expect(await destinationChecks(policy.tokens, sinks)).toEqual([
      {
        check: 'sink',
        target: 'tokens[0].sinks[0] and tokens[1].sinks[0]',
        result: 'ok',
        note: `two destinations: projects/${NUMBER}/secrets/${secret} and projects/${OTHER_NUMBER}/secrets/${secret}`,
      },
    ]);
  });
});
