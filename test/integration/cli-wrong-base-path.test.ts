import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { startRecorder } from '../helpers/recorder.js';

const DAY = 24 * 3600_000;
const PER_TOKEN_404 = 'set its new id in the policy';

interface Problem {
  dependency: string;
  kind: string;
  message: string;
  check: string;
  tokens: string[];
}

describe('every token answering 404 is the API address, not every id', () => {
  const fx = useCliFixture();
  async function cli(env: Record<string, string>, ...args: string[]) {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }
  /** Tokens that exist, and `missing` ids that do not. */
  async function tokens(existing: number, missing: string[] = []) {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [
        ...Array.from({ length: existing }, (_, i) => {
          const token = fx.emulator.store.add({ name: `svc-${i}`, expiresAt: new Date(Date.now() + 60 * DAY) });
          return { name: `svc-${i}`, id: token.id, sinks: [{ type: 'file', path: `secrets/svc-${i}.token` }] };
        }),
        ...missing.map((id) => ({ name: `gone-${id}`, id, sinks: [{ type: 'file', path: `secrets/${id}.token` }] })),
      ],
    });
  }

  it.each(['api/', 'v2'])('ROTATOR_API_URL with /%s appended: one shared failure naming ROTATOR_API_URL, exit 3', async (suffix) => {
    await tokens(3);
    const wrong = `${fx.emulator.apiUrl.replace(/\/$/, '')}/${suffix}`;
    const table = await cli({ ROTATOR_API_URL: wrong }, 'once');
    expect(table.code).toBe(3);
    expect(table.stdout.split('all 3 tokens answered 404 (not found), none answered otherwise')).toHaveLength(2);
    expect(table.stdout).toContain('check ROTATOR_API_URL (base path)');
    expect(table.stdout).toContain(`/${suffix.replace(/\/$/, '')}/v2/tokens/…`);
    expect(table.stdout).toContain('3 of 3 tokens not checked: svc-0, svc-1, svc-2');
    expect(table.stdout).not.toContain(PER_TOKEN_404);

    const json = await cli({ ROTATOR_API_URL: wrong }, 'once', '--json');
    expect(json.code).toBe(3);
    const [problem, ...more] = (JSON.parse(json.stdout) as { problems: Problem[] }).problems;
    expect(more).toEqual([]);
    expect(problem).toMatchObject({
      dependency: 'token service',
      kind: 'wrong-base-path',
      check: expect.stringMatching(/^is ROTATOR_API_URL the address the API answers at, without \/v2/),
    });
    expect(problem!.tokens.sort()).toEqual(['svc-0', 'svc-1', 'svc-2']);

    const plan = await cli({ ROTATOR_API_URL: wrong }, 'plan');
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain('check ROTATOR_API_URL (base path)');
    expect(plan.stdout).not.toContain(PER_TOKEN_404);
  });

  it('one missing token among found ones keeps its own message, exit 1', async () => {
    await tokens(2, ['tok-replaced']);
    const result = await cli({}, 'once');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(PER_TOKEN_404);
    expect(result.stdout).not.toContain('ROTATOR_API_URL');
  });

  it('a policy of one missing token keeps its own message: one 404 in the API’s words cannot tell', async () => {
    await tokens(0, ['tok-replaced']);
    const result = await cli({}, 'once');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(PER_TOKEN_404);
    expect(result.stdout).not.toContain('ROTATOR_API_URL');
  });

  describe('a web server answering in place of the API', () => {
    let web: Awaited<ReturnType<typeof startRecorder>>;
    beforeAll(async () => {
      web = await startRecorder((_req, res) =>
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body><h1>404 Not Found</h1></body></html>'),
      );
    });
    afterAll(async () => {
      await web.close();
    });

    it('a 404 web page is the address even for a single token, exit 3', async () => {
      await tokens(1);
      const result = await cli({ ROTATOR_API_URL: `${web.url}/tokens-api` }, 'once');
      expect(result.code).toBe(3);
      expect(result.stdout.split(`the token service at ${web.url} answered 404 with a web page, not the API's answer`)).toHaveLength(2);
      expect(result.stdout).toContain(`(GET ${web.url}/tokens-api/v2/tokens/…); check ROTATOR_API_URL (base path)`);
      expect(result.stdout).toContain('1 of 1 token not checked: svc-0');
      expect(result.stdout).not.toContain(PER_TOKEN_404);
    });
  });
});
