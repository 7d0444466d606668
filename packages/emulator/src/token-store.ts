import { randomBytes, randomUUID } from 'node:crypto';

import type { Clock } from './clock.js';

export interface EmulatedToken {
  id: string;
  name: string;
  description?: string;
  expiresAt: Date | null;
  secret: string;
  orgCapabilities: Record<string, string[]>;
  datasetCapabilities: Record<string, unknown>;
  /** Set when this token was regenerated: the id that replaced it. */
  replacedBy?: string;
}

const ORG_CAPABILITY_KEYS = [
  'annotations',
  'apiTokens',
  'auditLog',
  'billing',
  'dashboards',
  'datasets',
  'endpoints',
  'flows',
  'integrations',
  'monitors',
  'notifiers',
  'rbac',
  'sharedAccessKeys',
  'users',
  'views',
];

export function newSecret(): string {
  return `xaat-${randomUUID()}`;
}

function newId(): string {
  return randomBytes(6).toString('hex');
}

/** The service's tokens, with the service's rules: regenerate mints a new id; the old one lives on until its new expiry. */
export class TokenStore {
  readonly #tokens = new Map<string, EmulatedToken>();
  /**
   * Names whose tokens the probe endpoint (`GET /v2/user`) refuses with 401, as a token regenerated
   * without the capabilities it needs would be: for rehearsing a failed verification.
   */
  readonly probeFailures = new Set<string>();

  constructor(private readonly clock: Clock) {}

  add(input: { id?: string; name: string; description?: string; expiresAt: Date | null; secret?: string }): EmulatedToken {
    const token: EmulatedToken = {
      id: input.id ?? newId(),
      name: input.name,
      expiresAt: input.expiresAt,
      secret: input.secret ?? newSecret(),
      orgCapabilities: Object.fromEntries(ORG_CAPABILITY_KEYS.map((k) => [k, k === 'datasets' ? ['read'] : []])),
      datasetCapabilities: {},
      ...(input.description ? { description: input.description } : {}),
    };
    this.#tokens.set(token.id, token);
    return token;
  }

  isAlive(token: EmulatedToken): boolean {
    return token.expiresAt === null || token.expiresAt > this.clock.now();
  }

  /** A replaced token is gone once its overlap has ended; one that merely expired can still be looked at. */
  get(id: string): EmulatedToken | undefined {
    const token = this.#tokens.get(id);
    if (!token) return undefined;
    if (token.replacedBy && !this.isAlive(token)) return undefined;
    return token;
  }

  bySecret(secret: string): EmulatedToken | undefined {
    for (const token of this.#tokens.values()) if (token.secret === secret) return token;
    return undefined;
  }

  regenerate(id: string, existingTokenExpiresAt: Date, newTokenExpiresAt: Date | null): EmulatedToken {
    const old = this.#tokens.get(id)!;
    const fresh: EmulatedToken = { ...old, id: newId(), secret: newSecret(), expiresAt: newTokenExpiresAt };
    delete fresh.replacedBy;
    old.expiresAt = existingTokenExpiresAt;
    old.replacedBy = fresh.id;
    this.#tokens.set(fresh.id, fresh);
    return fresh;
  }

  all(): EmulatedToken[] {
    return [...this.#tokens.values()];
  }

  /** What GET answers: the contract's fields, never the secret. */
  static describe(token: EmulatedToken) {
    return {
      id: token.id,
      name: token.name,
      ...(token.description ? { description: token.description } : {}),
      expiresAt: token.expiresAt ? token.expiresAt.toISOString() : null,
      orgCapabilities: token.orgCapabilities,
      datasetCapabilities: token.datasetCapabilities,
    };
  }
}
