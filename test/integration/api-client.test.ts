import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { RegeneratedToken } from '../../src/api/token-service-client.js';
import { ApiError, RegenerateAnswerUnusableError, RegenerateOutcomeUnknownError } from '../../src/errors.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { emulatorClient } from '../helpers/rotator-client.js';

const H = 3600_000;
/** A regenerate that gave a token we can track, or a failed expectation. */
function tracked(result: RegeneratedToken) {
  if (result.kind !== 'tracked') throw new Error(`expected a tracked token, got ${result.kind}: ${result.problem}`);
  return result;
}
const times = () => ({ existingTokenExpiresAt: new Date(Date.now() + H), newTokenExpiresAt: new Date(Date.now() + 30 * 24 * H) });

describe('token service client against the emulator', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(() => {
    emulator.faults.clear();
    emulator.requests.length = 0;
  });

  const secrets = () => [...emulator.store.all().map((t) => t.secret), emulator.client.clientSecret!];
  const regenerates = () => emulator.requests.filter((r) => r.op === 'regenerate');

  it('retrieves a token, with never-expiring forms normalised to null', async () => {
    const token = emulator.store.add({ name: 'r1', expiresAt: null });
    const { api } = emulatorClient(emulator);
    expect(await api.retrieve(token.id)).toEqual({ id: token.id, name: 'r1', expiresAt: null });
  });

  it('regenerates: a new id and secret, and the old token now ends at existingTokenExpiresAt', async () => {
    const token = emulator.store.add({ name: 'g1', expiresAt: new Date(Date.now() + 2 * 24 * H) });
    const { api, log } = emulatorClient(emulator);
    const t = times();
    const fresh = tracked(await api.regenerate(token.id, t));
    expect(fresh.id).not.toBe(token.id);
    expect(fresh.secret.reveal()).toBe(emulator.store.get(fresh.id)!.secret);
    expect(fresh.expiresAt).toEqual(t.newTokenExpiresAt);
    expect((await api.retrieve(token.id)).expiresAt).toEqual(t.existingTokenExpiresAt);
    expectNoLeak({ log: log.lines.join('') }, secrets());
  });

  it('fetches a new access token once after a 401 and succeeds', async () => {
    const token = emulator.store.add({ name: 'a1', expiresAt: null });
    emulator.faults.add({ op: 'retrieve', action: { kind: 'status', status: 401, message: 'token revoked' } });
    const { api } = emulatorClient(emulator);
    expect((await api.retrieve(token.id)).id).toBe(token.id);
    expect(emulator.requests.map((r) => r.status)).toEqual([401, 200]);
  });

  it('gives up after a second 401', async () => {
    const token = emulator.store.add({ name: 'a2', expiresAt: null });
    emulator.faults.add({ op: 'retrieve', times: 2, action: { kind: 'status', status: 401 } });
    const { api } = emulatorClient(emulator);
    const error = (await api.retrieve(token.id).catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(401);
    expect(emulator.requests).toHaveLength(2);
  });

  it('retries a retrieve after 503s and a dropped connection', async () => {
    const token = emulator.store.add({ name: 'x1', expiresAt: null });
    emulator.faults.add({ op: 'retrieve', times: 2, action: { kind: 'status', status: 503 } });
    emulator.faults.add({ op: 'retrieve', action: { kind: 'drop' } });
    const { api, log } = emulatorClient(emulator);
    expect((await api.retrieve(token.id)).id).toBe(token.id);
    expect(emulator.requests.map((r) => r.status)).toEqual([503, 503, 'dropped', 200]);
    expect(log.lines.filter((l) => l.includes('trying again'))).toHaveLength(3);
  });

  it('waits for X-RateLimit-Reset after a 429, then succeeds', async () => {
    const token = emulator.store.add({ name: 'x2', expiresAt: null });
    const reset = Math.ceil(Date.now() / 1000) + 1;
    emulator.faults.add({
      op: 'retrieve',
      action: { kind: 'status', status: 429, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } },
    });
    const { api } = emulatorClient(emulator);
    await api.retrieve(token.id);
    expect(Date.now()).toBeGreaterThanOrEqual(reset * 1000);
    // Not bounded by a wall-clock window (a loaded machine may be late by seconds): the retry is
    // the second request, made no earlier than the reset, and there was no third.
    expect(emulator.requests.map((r) => r.status)).toEqual([429, 200]);
    expect(Date.parse(emulator.requests[1]!.at)).toBeGreaterThanOrEqual(reset * 1000);
  });

  it('sends a regenerate again after a 429, which the service never commits', async () => {
    const token = emulator.store.add({ name: 'g2', expiresAt: null });
    emulator.faults.add({ op: 'regenerate', action: { kind: 'status', status: 429, headers: { 'retry-after': '0' } } });
    const { api } = emulatorClient(emulator);
    const fresh = tracked(await api.regenerate(token.id, times()));
    expect(regenerates().map((r) => r.status)).toEqual([429, 200]);
    expect(fresh.id).not.toBe(token.id);
  });

  it('never follows a redirect of a regenerate, not even to its own origin: the outcome is unknown, and nothing more is sent', async () => {
    const token = emulator.store.add({ name: 'r-same', expiresAt: null });
    // 307 and 308 keep the method and body: followed, they would send the regenerate a second time.
    emulator.faults.add({
      op: 'regenerate',
      action: { kind: 'redirect', status: 307, location: `${emulator.apiUrl}/v2/tokens/${token.id}/regenerate` },
    });
    const { api } = emulatorClient(emulator);
    const error = await api.regenerate(token.id, times()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateOutcomeUnknownError);
    expect((error as Error).message).toMatch(/a redirect \(307\) to http:\/\/127\.0\.0\.1:\d+, not followed/);
    expect(regenerates().map((r) => r.status)).toEqual([307]);
  });

  it.each([
    ['a 500 after the service committed', { kind: 'status', status: 500, commit: true } as const],
    ['a 502 before anything happened', { kind: 'status', status: 502 } as const],
    ['a connection reset', { kind: 'drop', commit: true } as const],
    ['an answer without the token field', { kind: 'omit-token' } as const],
  ])('never sends a regenerate twice after %s: the outcome is unknown', async (_what, action) => {
    const token = emulator.store.add({ name: `u-${action.kind}`, expiresAt: null });
    emulator.faults.add({ op: 'regenerate', action });
    const { api, log } = emulatorClient(emulator);
    const error = await api.regenerate(token.id, times()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateOutcomeUnknownError);
    expect((error as ApiError).code).toBe('ERR_REGENERATE_OUTCOME_UNKNOWN');
    expect(regenerates()).toHaveLength(1);
    expectNoLeak({ log: log.lines.join(''), error: String(error), cause: String((error as Error).cause) }, secrets());
  });

  it.each([
    ['empty', {}],
    ['a number', { token: 42 }],
    ['null', { token: null }],
  ])('a 200 whose token field is %s: the service acted, the answer is unusable, and it is never sent again', async (_what, fault) => {
    const token = emulator.store.add({ name: 'unusable', expiresAt: null });
    emulator.faults.add({ op: 'regenerate', action: { kind: 'unusable-token', ...fault } });
    const { api, log } = emulatorClient(emulator);
    const error = await api.regenerate(token.id, times()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateAnswerUnusableError);
    expect((error as ApiError).code).toBe('ERR_REGENERATE_ANSWER_UNUSABLE');
    expect(regenerates()).toEqual([expect.objectContaining({ status: 200, committed: true })]);
    expect(emulator.store.get(token.id)?.replacedBy, 'a new token exists').toEqual(expect.any(String));
    expectNoLeak({ log: log.lines.join(''), error: String(error) }, secrets());
  });

  it('the unusable-token fault leaves a retrieve alone', async () => {
    const token = emulator.store.add({ name: 'unusable-read', expiresAt: null });
    emulator.faults.add({ op: 'retrieve', action: { kind: 'unusable-token' } });
    const { api } = emulatorClient(emulator);
    expect(await api.retrieve(token.id)).toEqual({ id: token.id, name: 'unusable-read', expiresAt: null });
  });

  it('treats a timeout of regenerate as an unknown outcome, without sending it again', async () => {
    const token = emulator.store.add({ name: 'u-hang', expiresAt: null });
    emulator.faults.add({ op: 'regenerate', action: { kind: 'hang', ms: 1500, commit: true } });
    const { api } = emulatorClient(emulator, { timeoutMs: 1000 });
    const error = await api.regenerate(token.id, times()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegenerateOutcomeUnknownError);
    expect((error as Error).message).toMatch(/no answer in time .*may or may not have regenerated/);
    expect(regenerates()).toHaveLength(1);
  });

  it.each([400, 403, 404, 409, 422])('reports a definite refusal %i as a plain ApiError, sent once', async (status) => {
    const token = emulator.store.add({ name: `d-${status}`, expiresAt: null });
    emulator.faults.add({ op: 'regenerate', action: { kind: 'status', status, message: `refused with ${status}` } });
    const { api } = emulatorClient(emulator);
    const error = (await api.regenerate(token.id, times()).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(RegenerateOutcomeUnknownError);
    expect(error.status).toBe(status);
    expect(error.serviceMessage).toBe(`refused with ${status}`);
    expect(error.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(error.message).toContain(`(trace id ${error.traceId})`);
    expect(regenerates()).toHaveLength(1);
  });

  it('reports the service wording of an unparseable time', async () => {
    const token = emulator.store.add({ name: 'bad-time', expiresAt: null });
    const { api } = emulatorClient(emulator);
    const error = (await api
      .regenerate(token.id, { existingTokenExpiresAt: new Date(Number.NaN), newTokenExpiresAt: null })
      .catch((e: unknown) => e)) as Error;
    // An invalid Date cannot even be serialised: the client refuses before sending.
    expect(error).toBeInstanceOf(ApiError);
    expect(regenerates()).toHaveLength(0);
  });
});
