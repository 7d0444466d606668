import { formatDuration } from '../common/duration.js';
import type { RotationSettings } from '../config/types.js';
import { describeDrift, type DriftFinding, repairable } from './sink-drift.js';

/** What the service told us of the token: its id and when it stops working (null: never). */
export interface TokenView {
  id: string;
  expiresAt: Date | null;
}

/** What our state store remembers of the name. */
export interface HistoryView {
  /** When token-rotator last rotated this name; null if it never has. */
  lastRotatedAt: Date | null;
  /** When token-rotator first saw this name's current lineage. */
  adoptedAt: Date;
}

export type CheckName = 'tokenExpired' | 'tokenNearingExpiry' | 'tokenOlderThanMaxAge' | 'sinkDrift' | 'notDue';

export interface Decision {
  action: 'rotate' | 'skip';
  check: CheckName;
  reason: string;
  /** When the token becomes due; null when nothing will ever make it due. */
  dueAt: Date | null;
}

interface Input {
  token: TokenView;
  history: HistoryView;
  settings: RotationSettings;
  now: Date;
  /** Sinks found not to hold the current secret (see `assessSinks`); none when not checked. */
  drift?: readonly DriftFinding[];
}

const ago = (ms: number) => `${formatDuration(ms)} ago`;

/**
 * The window before expiry in which a token is due. A share is of the token's own lifetime when we
 * know it (we minted the current token at `lastRotatedAt`), else of the policy's lifetime.
 */
export function renewWindowMs({ token, history, settings }: Omit<Input, 'now'>): number | null {
  if (settings.renewBefore.kind === 'duration') return settings.renewBefore.ms;
  const knownLifetime =
    token.expiresAt && history.lastRotatedAt ? token.expiresAt.getTime() - history.lastRotatedAt.getTime() : settings.lifetimeMs;
  return knownLifetime === null ? null : (knownLifetime * settings.renewBefore.percent) / 100;
}

function tokenExpired({ token, now }: Input): Decision | undefined {
  if (!token.expiresAt || token.expiresAt > now) return undefined;
  return {
    action: 'rotate',
    check: 'tokenExpired',
    reason: `expired ${ago(now.getTime() - token.expiresAt.getTime())} (${token.expiresAt.toISOString()})`,
    dueAt: token.expiresAt,
  };
}

function tokenNearingExpiry(input: Input): Decision | undefined {
  const { token, now } = input;
  const window = renewWindowMs(input);
  if (!token.expiresAt || window === null) return undefined;
  const dueAt = new Date(token.expiresAt.getTime() - window);
  if (dueAt > now) return undefined;
  const renewBefore =
    input.settings.renewBefore.kind === 'share'
      ? `${input.settings.renewBefore.percent}% of lifetime (${formatDuration(window)})`
      : formatDuration(window);
  return {
    action: 'rotate',
    check: 'tokenNearingExpiry',
    reason: `expires in ${formatDuration(token.expiresAt.getTime() - now.getTime())}, within renewBefore ${renewBefore}`,
    dueAt,
  };
}

/** Age counts from our last rotation, or from adoption for a token we have not rotated yet. */
function maxAgeDueAt({ history, settings }: Input): Date | null {
  if (settings.maxAgeMs === null) return null;
  const since = history.lastRotatedAt ?? history.adoptedAt;
  return new Date(since.getTime() + settings.maxAgeMs);
}

function tokenOlderThanMaxAge(input: Input): Decision | undefined {
  const dueAt = maxAgeDueAt(input);
  if (!dueAt || dueAt > input.now) return undefined;
  const since = input.history.lastRotatedAt ?? input.history.adoptedAt;
  const what = input.history.lastRotatedAt ? 'last rotated' : 'adopted';
  return {
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    reason: `${what} ${ago(input.now.getTime() - since.getTime())}, older than maxAge ${formatDuration(input.settings.maxAgeMs!)}`,
    dueAt,
  };
}

function notDue(input: Input): Decision {
  const { token, now } = input;
  const window = renewWindowMs(input);
  const expiryDue = token.expiresAt && window !== null ? new Date(token.expiresAt.getTime() - window) : null;
  const ageDue = maxAgeDueAt(input);
  const candidates = [expiryDue, ageDue].filter((d): d is Date => d !== null);
  const dueAt = candidates.length ? new Date(Math.min(...candidates.map((d) => d.getTime()))) : null;
  const expiry = token.expiresAt ? `expires in ${formatDuration(token.expiresAt.getTime() - now.getTime())}` : 'never expires';
  const due = dueAt ? `due in ${formatDuration(dueAt.getTime() - now.getTime())}` : 'no maxAge set, so never due';
  return { action: 'skip', check: 'notDue', reason: `${expiry}; ${due}`, dueAt };
}

/**
 * A sink lacks the current secret, and the policy says to repair it: rotating is the only way to get
 * a secret to deliver, since none is kept. Checked after the time-based checks, whose reasons win.
 */
function sinkDrift({ drift, settings, now }: Input): Decision | undefined {
  const found = repairable(drift ?? []);
  if (found.length === 0 || settings.onDrift !== 'rotate') return undefined;
  return { action: 'rotate', check: 'sinkDrift', reason: `sink drift: ${found.map(describeDrift).join('; ')}`, dueAt: now };
}

const CHECKS = [tokenExpired, tokenNearingExpiry, tokenOlderThanMaxAge, sinkDrift];

/** Whether a token is due, and why: the first check in the chain that fires, else not due. */
export function decide(input: Input): Decision {
  for (const check of CHECKS) {
    const decision = check(input);
    if (decision) return decision;
  }
  return notDue(input);
}
