import got, { RequestError } from 'got';
import { describe, expect, it } from 'vitest';

import type { TokenServiceClient } from '../../src/api/token-service-client.js';
import { translateApiError } from '../../src/api/translate-error.js';
import { guardSharedDependencies } from '../../src/cli/dependency-breaker.js';
import { ApiError, AuthError, SinkError } from '../../src/errors.js';
import { openSinkSet } from '../../src/sinks/sink-set.js';

async function gotError(url: string): Promise<unknown> {
  return got(url, { retry: { limit: 0 }, timeout: { request: 5000 } }).catch((error: unknown) => error);
}

describe('errors carry the class of a shared failure', () => {
  it('a refused connection and an unknown host are told apart, in words and in the class', async () => {
    const refused = translateApiError(await gotError('http://127.0.0.1:1/v2/tokens/x'), 'retrieve', 'token x');
    expect(refused.message).toBe('cannot reach the token service at http://127.0.0.1:1: connection refused (ECONNREFUSED)');
    expect(refused.dependencyFailure).toMatchObject({
      dependency: 'token service',
      kind: 'connection-refused',
      target: 'http://127.0.0.1:1',
    });
    expect(refused.causeClass).toBe('connection-refused');

    const unknown = translateApiError(await gotError('https://token-service.invalid/v2/tokens/x'), 'retrieve', 'token x');
    expect(unknown.message).toMatch(
      /^cannot reach the token service at https:\/\/token-service.invalid: unknown host \((ENOTFOUND|EAI_AGAIN)\)$/,
    );
    expect(unknown.dependencyFailure?.kind).toBe('unknown-host');
  });

  it("keeps the code an earlier try saw when Node's retry ends in a bare socket error (got#2469)", () => {
    const bare = Object.assign(new Error('Socket closed before the connection was established'), {
      code: 'ERR_SOCKET_CLOSED_BEFORE_CONNECTION',
    });
    const error = translateApiError(bare, 'retrieve', 'token x', { url: 'http://127.0.0.1:9/', code: 'ECONNREFUSED' });
    expect(error.message).toBe('cannot reach the token service at http://127.0.0.1:9: connection refused (ECONNREFUSED)');
  });

  it("the authorization server's refusal comes through as itself, not as a failed request (ERR_AUTH)", () => {
    const refusal = new AuthError('the authorization server at https://id.example/ refused the client: invalid_client');
    const wrapped = new RequestError(refusal.message, refusal, {} as never);
    expect(translateApiError(wrapped, 'regenerate', 'token x')).toBe(refusal);
  });
});

describe('the shared-dependency breaker', () => {
  it('after a shared failure, answers every later call with it without calling again; other failures pass', async () => {
    let calls = 0;
    const down = new ApiError('cannot reach the token service at http://h: connection refused (ECONNREFUSED)', {
      op: 'retrieve',
      dependencyFailure: { dependency: 'token service', kind: 'connection-refused', target: 'http://h', check: 'c' },
    });
    const api = {
      retrieve: async (id: string) => {
        calls++;
        throw id === 'missing' ? new ApiError('retrieve token missing: the service answered 404', { op: 'retrieve', status: 404 }) : down;
      },
      regenerate: async () => {
        calls++;
        throw down;
      },
    } as unknown as TokenServiceClient;
    const guarded = guardSharedDependencies(api);
    await expect(guarded.api.retrieve('missing')).rejects.toThrow(/404/);
    expect(guarded.tripped()).toBeUndefined();
    await expect(guarded.api.retrieve('a')).rejects.toBe(down);
    await expect(guarded.api.retrieve('b')).rejects.toBe(down);
    expect(calls).toBe(2);
    expect(guarded.tripped()).toBe(down);
  });
});

describe('sink errors name their sink once', () => {
  const type = (message: string) => ({
    target: () => 't',
    describe: () => 'exec ./push a',
    open: async () => ({
      write: async () => {
        throw new Error(message);
      },
      read: async () => undefined,
      close: async () => undefined,
    }),
  });

  it('an error that does not name the sink is named by the set; one that does is left as it is', async () => {
    const bare = openSinkSet({ exec: type('the program exited with 3') } as never, {} as never);
    const error = await bare.write({ type: 'exec' }, {} as never, {} as never, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toBe('exec ./push a: the program exited with 3');

    const named = openSinkSet({ exec: type('write through exec ./push a failed: exit 3') } as never, {} as never);
    const same = await named.write({ type: 'exec' }, {} as never, {} as never, {}).catch((e: unknown) => e);
    expect((same as Error).message).toBe('write through exec ./push a failed: exit 3');
  });
});
