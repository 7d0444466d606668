import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CliResult, runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { useKubernetesDouble } from '../helpers/kubernetes.js';
import { itemsOf } from '../helpers/output-items.js';

const DAY = 24 * 3600_000;

const k = useKubernetesDouble();

/**
 * A typo or a destination the rotator cannot write must never cost a token: the sinks prove they
 * can take the write before the regenerate is sent, and a sink that cannot stops the rotation with
 * the old token untouched (its expiry as it was, the apps' copy still good).
 */
describe('a due token whose sink cannot take the new secret', () => {
  const fx = useCliFixture({ env: () => ({ ...k.env }) });

  async function once(): Promise<CliResult> {
    const result = await runCli(['once', '--json', '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir });
    fx.results.push(result);
    return result;
  }

  const cases = [
    {
      case: 'a kubernetes-secret sink in a namespace that does not exist (appz)',
      sink: { type: 'kubernetes-secret', name: 'ingest-token', namespace: 'appz' },
      named: /kubernetes-secret appz\/ingest-token/,
      arrange: async () => undefined,
    },
    {
      case: 'a Secret not managed by token-rotator, without adopt',
      sink: { type: 'kubernetes-secret', name: 'theirs', namespace: 'apps' },
      named: /kubernetes-secret apps\/theirs/,
      arrange: async () => {
        k.double.objects.put({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'theirs', namespace: 'apps' },
          type: 'Opaque',
          data: { token: Buffer.from('someone-elses').toString('base64') },
        });
      },
    },
    {
      case: 'an immutable Secret of ours',
      sink: { type: 'kubernetes-secret', name: 'frozen', namespace: 'apps' },
      named: /kubernetes-secret apps\/frozen/,
      arrange: async () => {
        k.double.objects.put({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'frozen', namespace: 'apps', labels: { 'app.kubernetes.io/managed-by': 'token-rotator' } },
          type: 'Opaque',
          immutable: true,
          data: { token: Buffer.from('xaat-frozen-value').toString('base64') },
        });
      },
    },
    {
      case: 'a file sink whose folder cannot be made (a file stands where the folder should be)',
      sink: { type: 'file', path: 'blocked/ingest.token' },
      named: /file blocked\/ingest\.token/,
      arrange: async () => writeFile(join(fx.dir, 'blocked'), 'not a folder\n'),
    },
  ] as const;

  it.each(cases.map((c) => [c.case, c] as const))(
    '%s: no regenerate, exit 1, the sink named, the old token as it was',
    async (_case, c) => {
      const expiresAt = new Date(Date.now() + 2 * DAY);
      const token = fx.emulator.store.add({ name: 'ingest', expiresAt });
      await c.arrange();
      await writePolicy(fx.dir, { version: 1, tokens: [{ name: 'ingest', id: token.id, sinks: [c.sink] }] });

      const result = await once();
      expect(result.code, result.stderr).toBe(1);
      expect(
        fx.emulator.requests.filter((r) => r.op === 'regenerate'),
        'no regenerate',
      ).toEqual([]);
      const [item] = itemsOf(result.stdout) as Array<{ result: string; error: { message: string } }>;
      expect(item).toMatchObject({ result: 'failed', error: { message: expect.stringMatching(c.named) } });
      expect(item!.error.message).toMatch(/not rotated, the old token is untouched/);
      expect(fx.emulator.store.get(token.id)?.expiresAt?.getTime()).toBe(expiresAt.getTime());
    },
  );
});
