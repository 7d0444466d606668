import { randomUUID } from 'node:crypto';

import { type EmulatedToken, TokenStore } from 'token-rotator-emulator';

import type { RotationTimes, ServiceToken } from '../../src/api/service-token.js';
import type { RegeneratedToken, TokenServiceClient } from '../../src/api/token-service-client.js';
import type { Clock } from '../../src/clock.js';
import { ApiError, RegenerateAnswerUnusableError, RegenerateOutcomeUnknownError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';

/**
 * In every secret this service mints: a log line holding it is a leak, whichever token it was
 * (the current one, an orphan, a throwaway), without the test having to know them all.
 */
export const SECRET_CANARY = 'c4n4ry';

const canarySecret = () => `xaat-${SECRET_CANARY}-${randomUUID()}`;

/** What one regenerate call does, in the service and on the way back. */
export type RegenerateBehaviour =
  /** The service commits and the answer arrives. */
  | { kind: 'answer' }
  /** A definite refusal (400, 403, 404, 409, 422…): nothing changes at the service. */
  | { kind: 'refuse'; status: number }
  /** The service commits, then the answer is lost (a reset, a timeout, a 5xx after acting). */
  | { kind: 'lose-answer' }
  /** The outcome is unknown to the caller, and the service did not act (a 502 before it, a reset). */
  | { kind: 'unknown' }
  /**
   * The service commits and answers 200, but its `token` field holds nothing usable (empty, not a
   * string): the caller knows it acted, and the secret is lost.
   */
  | { kind: 'unusable-answer' };

export type RegenerateScript = RegenerateBehaviour & {
  /** Only for a regenerate of this token id; any when absent. */
  id?: string;
  /**
   * Runs while the call is in flight: after the service committed (when it does), before the
   * caller gets an answer. Where a test plays what happens while the caller is stopped or frozen.
   */
  meanwhile?: () => void | Promise<void>;
};

/** A retrieve that fails: `status` answered (503: the service is down), `times` times. */
export interface RetrieveScript {
  id?: string;
  status: number;
  times?: number;
}

/** One regenerate as the service saw it. Never a secret. */
export interface RegenerateCall {
  id: string;
  existingTokenExpiresAt: string;
  newTokenExpiresAt: string | null;
  behaviour: RegenerateBehaviour['kind'] | 'not-found';
  /** Whether the service acted: a new token exists. */
  committed: boolean;
  /** The token it minted, when it committed. */
  newId?: string;
}

/**
 * A TokenServiceClient over an in-memory TokenStore (the emulator's: regenerate mints a new id and
 * secret, the old token then stops at `existingTokenExpiresAt`, and a replaced token is gone once
 * that passes), with faults a test scripts call by call. Every secret it mints carries SECRET_CANARY.
 */
export class FakeTokenService implements TokenServiceClient {
  readonly store: TokenStore;
  readonly regenerates: RegenerateCall[] = [];
  readonly retrieves: string[] = [];
  readonly #regenerateScripts: RegenerateScript[] = [];
  readonly #retrieveScripts: Array<RetrieveScript & { remaining: number }> = [];

  constructor(readonly clock: Clock) {
    this.store = new TokenStore(clock);
  }

  /** A token as it exists before any run: by default with a canary secret. */
  add(input: { name: string; expiresAt: Date | null; id?: string; secret?: string }): EmulatedToken {
    return this.store.add({ ...input, secret: input.secret ?? canarySecret() });
  }

  /** Queues what the next regenerate calls do, in order (the first matching script is used once); then they answer. */
  onRegenerate(...scripts: RegenerateScript[]): this {
    this.#regenerateScripts.push(...scripts);
    return this;
  }

  /** Queues failing retrieves. */
  onRetrieve(...scripts: RetrieveScript[]): this {
    this.#retrieveScripts.push(...scripts.map((s) => ({ ...s, remaining: s.times ?? 1 })));
    return this;
  }

  /** Regenerates the service acted on (of `id` only, when given). */
  committed(id?: string): RegenerateCall[] {
    return this.regenerates.filter((c) => c.committed && (id === undefined || c.id === id));
  }

  /** The token as the service knows it now; undefined once it is gone. */
  token(id: string): EmulatedToken | undefined {
    return this.store.get(id);
  }

  /** Whether the token with this secret works now. */
  works(secret: string | undefined): boolean {
    const token = secret === undefined ? undefined : this.store.bySecret(secret);
    return token !== undefined && this.store.get(token.id) !== undefined && this.store.isAlive(token);
  }

  /** Every secret it ever minted, for leak checks. */
  secrets(): string[] {
    return this.store.all().map((t) => t.secret);
  }

  async retrieve(id: string): Promise<ServiceToken> {
    this.retrieves.push(id);
    const script = this.#retrieveScripts.find((s) => s.remaining > 0 && (s.id === undefined || s.id === id));
    if (script) {
      script.remaining -= 1;
      throw new ApiError(`retrieve token ${id}: the service answered ${script.status} (injected)`, {
        op: 'retrieve',
        status: script.status,
      });
    }
    const token = this.store.get(id);
    if (!token) throw new ApiError(`retrieve token ${id}: the service answered 404 (token not found)`, { op: 'retrieve', status: 404 });
    return { id: token.id, name: token.name, expiresAt: token.expiresAt ? new Date(token.expiresAt) : null };
  }

  async regenerate(id: string, times: RotationTimes): Promise<RegeneratedToken> {
    const call: RegenerateCall = {
      id,
      existingTokenExpiresAt: times.existingTokenExpiresAt.toISOString(),
      newTokenExpiresAt: times.newTokenExpiresAt ? times.newTokenExpiresAt.toISOString() : null,
      behaviour: 'answer',
      committed: false,
    };
    this.regenerates.push(call);
    if (!this.store.get(id)) {
      call.behaviour = 'not-found';
      throw new ApiError(`regenerate token ${id}: the service answered 404 (token not found)`, { op: 'regenerate', status: 404 });
    }
    const index = this.#regenerateScripts.findIndex((s) => s.id === undefined || s.id === id);
    const script: RegenerateScript = index >= 0 ? this.#regenerateScripts.splice(index, 1)[0]! : { kind: 'answer' };
    call.behaviour = script.kind;

    let fresh: EmulatedToken | undefined;
    if (script.kind === 'answer' || script.kind === 'lose-answer' || script.kind === 'unusable-answer') {
      fresh = this.store.regenerate(id, times.existingTokenExpiresAt, times.newTokenExpiresAt);
      fresh.secret = canarySecret();
      call.committed = true;
      call.newId = fresh.id;
    }
    await script.meanwhile?.();

    switch (script.kind) {
      case 'refuse':
        throw new ApiError(`regenerate token ${id}: the service answered ${script.status} (injected)`, {
          op: 'regenerate',
          status: script.status,
        });
      case 'lose-answer':
      case 'unknown':
        throw new RegenerateOutcomeUnknownError(`regenerate token ${id}: the connection was reset before an answer (injected)`, {
          op: 'regenerate',
        });
      case 'unusable-answer':
        throw new RegenerateAnswerUnusableError(
          `regenerate token ${id}: the service answered 200, but its token field is empty (injected)`,
          {
            op: 'regenerate',
            status: 200,
          },
        );
      case 'answer':
        return {
          kind: 'tracked',
          id: fresh!.id,
          name: fresh!.name,
          expiresAt: fresh!.expiresAt ? new Date(fresh!.expiresAt) : null,
          secret: new Secret(fresh!.secret),
        };
    }
  }
}
