import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';
import { freePort } from '../helpers/free-port.js';
import { itemsOf } from '../helpers/output-items.js';
import { startRecorder } from '../helpers/recorder.js';

const DAY = 24 * 3600_000;

const closedPort = freePort;

describe('a failure every token shares is said once, with what to check, and exit 3', () => {
  const fx = useCliFixture();
  async function cli(env: Record<string, string>, ...args: string[]) {
    const result = await runCli([...args, '--config', 'rotation.yaml', '--dotenv', fx.envFile], { cwd: fx.dir, env });
    fx.results.push(result);
    return result;
  }
  async function twentyTokens() {
    await writePolicy(fx.dir, {
      version: 1,
      tokens: Array.from({ length: 20 }, (_, i) => {
        const token = fx.emulator.store.add({ name: `svc-${i}`, expiresAt: new Date(Date.now() + 60 * DAY) });
        return { name: `svc-${i}`, id: token.id, sinks: [{ type: 'file', path: `secrets/svc-${i}.token` }] };
      }),
    });
  }

  it('the token service refusing connections: one problem up front, a small output, no stack trace', async () => {
    await twentyTokens();
    const port = await closedPort();
    const down = { ROTATOR_API_URL: `http://127.0.0.1:${port}` };
    const table = await cli(down, 'once');
    expect(table.code).toBe(3);
    const message = `cannot reach the token service at http://127.0.0.1:${port}: connection refused (ECONNREFUSED)`;
    expect(table.stdout.split(message)).toHaveLength(2);
    expect(table.stdout).toContain('20 of 20 tokens not checked: svc-0, svc-1');
    expect(table.stdout).toContain('check: is the token service running, and is ROTATOR_API_URL (host and port) right?');
    expect(table.stdout).not.toMatch(/^svc-\d+\s/m);
    // was 2.4 KB on stdout with 20 identical rows
    expect(table.stdout.length).toBeLessThan(400);
    expect(table.stdout + table.stderr).not.toMatch(/\n\s+at /);

    const json = await cli(down, 'once', '--json');
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout) as { problems: Array<Record<string, unknown>> };
    expect(parsed.problems).toEqual([
      expect.objectContaining({ dependency: 'token service', kind: 'connection-refused', message, tokens: expect.any(Array) }),
    ]);
    expect((parsed.problems[0]!.tokens as string[]).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `svc-${i}`).sort());
    expect(itemsOf(json.stdout).every((i: { result: string; expiry: string }) => i.result === 'failed' && i.expiry === 'unknown')).toBe(
      true,
    );

    const plan = await cli(down, 'plan');
    expect(plan.code).toBe(3);
    expect(plan.stdout.split(message)).toHaveLength(2);
  });

  it('an unknown host is told apart from a refused connection', async () => {
    await twentyTokens();
    const result = await cli({ ROTATOR_API_URL: 'https://token-service.invalid' }, 'once', '--json');
    expect(result.code).toBe(3);
    const [problem] = (JSON.parse(result.stdout) as { problems: Array<{ kind: string; message: string; check: string }> }).problems;
    expect(problem).toMatchObject({ kind: 'unknown-host', check: expect.stringMatching(/host name in ROTATOR_API_URL/) });
    expect(problem!.message).toMatch(
      /^cannot reach the token service at https:\/\/token-service.invalid: unknown host \((ENOTFOUND|EAI_AGAIN)\)$/,
    );
  });

  it('a wrong client secret is the authorization server refusing the client, not a failed request', async () => {
    await twentyTokens();
    const wrong = 'canary-wrong-client-secret-1101';
    const result = await cli({ ROTATOR_OAUTH_CLIENT_SECRET: wrong }, 'once');
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^the authorization server at \S+ refused the client: invalid_client/);
    expect(result.stdout).toContain('check: are ROTATOR_OAUTH_CLIENT_ID and its secret');
    expect(result.stdout).toContain('20 of 20 tokens not checked');
    expect(result.stdout + result.stderr).not.toContain('ERR_AUTH)');
    expect(result.stdout + result.stderr).not.toContain(wrong);
    // one token request: the rest of the run did not ask again
    expect(fx.emulator.requests.filter((r) => r.op === 'retrieve' || r.op === 'regenerate')).toHaveLength(0);
  });

  it('a wrong ROTATOR_OAUTH_ISSUER names the discovery URL, its status and the variable, once, exit 3', async () => {
    await twentyTokens();
    const wrong = `${fx.emulator.issuer}/wrong`;
    const result = await cli({ ROTATOR_OAUTH_ISSUER: wrong }, 'once');
    expect(result.code).toBe(3);
    const message = `OAuth discovery at ${wrong}/.well-known/openid-configuration answered HTTP 404; check ROTATOR_OAUTH_ISSUER\n`;
    expect(result.stdout.split(message)).toHaveLength(2);
    expect(result.stdout).toContain("check: is ROTATOR_OAUTH_ISSUER the authorization server's issuer");
    expect(result.stdout).toContain('20 of 20 tokens not checked');
    expect(result.stdout + result.stderr).not.toContain('unexpected HTTP response status code');
    expect(fx.emulator.requests.filter((r) => r.op === 'retrieve' || r.op === 'regenerate')).toHaveLength(0);

    const json = await cli({ ROTATOR_OAUTH_ISSUER: wrong }, 'once', '--json');
    expect(json.code).toBe(3);
    expect((JSON.parse(json.stdout) as { problems: unknown[] }).problems).toEqual([
      expect.objectContaining({
        dependency: 'authorization server',
        kind: 'discovery-failed',
        target: new URL(wrong).origin,
        message: message.trim(),
      }),
    ]);
  });

  describe('a token endpoint that fails', () => {
    let status = 500;
    let endpoint: Awaited<ReturnType<typeof startRecorder>>;
    beforeAll(async () => {
      endpoint = await startRecorder((_req, res) =>
        status === 401
          ? res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}')
          : res.writeHead(status, { 'content-type': 'text/html' }).end('<html>down</html>'),
      );
    });
    afterAll(async () => {
      await endpoint.close();
    });

    it.each([500, 404])('answering %i names the token endpoint and the status, once, exit 3', async (answered) => {
      status = answered;
      endpoint.calls.length = 0;
      await twentyTokens();
      const result = await cli({ ROTATOR_OAUTH_ISSUER: '', ROTATOR_OAUTH_TOKEN_URL: `${endpoint.url}/oauth2/token?tenant=t1` }, 'once');
      expect(result.code).toBe(3);
      const message = `the OAuth token endpoint ${endpoint.url}/oauth2/token answered HTTP ${answered}; check ROTATOR_OAUTH_TOKEN_URL\n`;
      expect(result.stdout.split(message)).toHaveLength(2);
      expect(result.stdout).toContain('check: is the token endpoint right (ROTATOR_OAUTH_TOKEN_URL');
      expect(result.stdout).toContain('20 of 20 tokens not checked');
      // the query is not echoed: it may hold something private
      expect(result.stdout + result.stderr).not.toContain('tenant=t1');
      expect(endpoint.calls.length).toBeLessThan(20);
    });

    it('refusing the client, or unreachable, names the server without the query either', async () => {
      status = 401;
      await twentyTokens();
      const refused = await cli({ ROTATOR_OAUTH_ISSUER: '', ROTATOR_OAUTH_TOKEN_URL: `${endpoint.url}/oauth2/token?tenant=t1` }, 'once');
      expect(refused.code).toBe(3);
      expect(refused.stdout).toContain(`the authorization server at ${endpoint.url}/oauth2/token refused the client: invalid_client`);
      const gone = `http://127.0.0.1:${await freePort()}/oauth2/token?tenant=t1`;
      const unreachable = await cli({ ROTATOR_OAUTH_ISSUER: '', ROTATOR_OAUTH_TOKEN_URL: gone }, 'once');
      expect(unreachable.code).toBe(3);
      expect(unreachable.stdout).toContain('cannot reach the authorization server at');
      for (const result of [refused, unreachable]) expect(result.stdout + result.stderr).not.toContain('tenant=t1');
    });
  });
});
