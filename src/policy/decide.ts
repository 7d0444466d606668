import { formatDuration } from '../common/duration.js';
import type { RotationSettings } from './rotation-settings.js';
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
  /** `redeliver`: no new token; the sinks that lack the current secret are given the held one again. */
  action: 'rotate' | 'redeliver' | 'skip';
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
  /**
   * Why the current secret is not known, when it is not (no copy in state and none in a sink): only
   * a new token can then repair a sink. Undefined: the state holds it (or nothing was checked).
   */
  secretUnknown?: string;
}

const ago = (ms: number) => `${formatDuration(ms)} ago`;

/**
 * The window before expiry in which a token is due. A share is of the token's own lifetime when we
 * know it (we minted the current token at `lastRotatedAt`), else of the policy's lifetime. With
 * neither (a share of lifetime "never", which the policy refuses), there is no window: the token
 * is due when it expires.
 */
export function renewWindowMs({ token, history, settings }: Omit<Input, 'now'>): number {
  if (settings.renewBefore.kind === 'duration') return settings.renewBefore.ms;
  const knownLifetime =
    token.expiresAt && history.lastRotatedAt ? token.expiresAt.getTime() - history.lastRotatedAt.getTime() : settings.lifetimeMs;
  return ((knownLifetime ?? 0) * settings.renewBefore.percent) / 100;
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
  if (!token.expiresAt) return undefined;
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

/**
 * A token that never expires would otherwise never be due: a long-lived secret kept long-lived is
 * what rotation exists to prevent. Unless the policy says otherwise, it is rotated at this age.
 */
export const NEVER_EXPIRES_MAX_AGE_MS = 90 * 24 * 3600_000;

/** The maxAge that applies to this token, and what to call it in a reason. */
function effectiveMaxAge({ token, settings }: Input): { ms: number; label: string } | null {
  if (typeof settings.maxAgeMs === 'number') return { ms: settings.maxAgeMs, label: `maxAge ${formatDuration(settings.maxAgeMs)}` };
  if (settings.maxAgeMs === undefined && token.expiresAt === null) {
    return {
      ms: NEVER_EXPIRES_MAX_AGE_MS,
      label: `maxAge ${formatDuration(NEVER_EXPIRES_MAX_AGE_MS)} (default for tokens that never expire)`,
    };
  }
  return null;
}

/**
 * Age counts from our last rotation. The service does not say when a token was created, so for a
 * token we have not rotated yet it counts from when token-rotator first saw it, and says so.
 */
function ageOf({ history, now }: Input): { since: Date; text: string } {
  if (history.lastRotatedAt)
    return { since: history.lastRotatedAt, text: `last rotated ${ago(now.getTime() - history.lastRotatedAt.getTime())}` };
  return {
    since: history.adoptedAt,
    text: `first seen ${ago(now.getTime() - history.adoptedAt.getTime())} (its age before that is unknown)`,
  };
}

/** When the token becomes due by its age, and the maxAge that says so; null when no maxAge applies. */
function dueByAge(input: Input): { at: Date; label: string } | null {
  const maxAge = effectiveMaxAge(input);
  return maxAge && { at: new Date(ageOf(input).since.getTime() + maxAge.ms), label: maxAge.label };
}

function tokenOlderThanMaxAge(input: Input): Decision | undefined {
  const byAge = dueByAge(input);
  if (!byAge || byAge.at > input.now) return undefined;
  const expiry = input.token.expiresAt === null ? 'never expires; ' : '';
  return {
    action: 'rotate',
    check: 'tokenOlderThanMaxAge',
    reason: `${expiry}${ageOf(input).text}, older than ${byAge.label}`,
    dueAt: byAge.at,
  };
}

function notDue(input: Input): Decision {
  const { token, now } = input;
  const byAge = dueByAge(input);
  const dueIn = (at: Date) => `due in ${formatDuration(at.getTime() - now.getTime())}`;
  if (token.expiresAt === null) {
    // Due by its age alone: which maxAge says so, and since when the age counts.
    const due = byAge ? `${dueIn(byAge.at)} by ${byAge.label}; ${ageOf(input).text}` : 'maxAge is off ("never"), so never due';
    return { action: 'skip', check: 'notDue', reason: `never expires; ${due}`, dueAt: byAge?.at ?? null };
  }
  const expiryDue = token.expiresAt.getTime() - renewWindowMs(input);
  const dueAt = new Date(Math.min(expiryDue, byAge?.at.getTime() ?? Infinity));
  const expiresIn = formatDuration(token.expiresAt.getTime() - now.getTime());
  return { action: 'skip', check: 'notDue', reason: `expires in ${expiresIn}; ${dueIn(dueAt)}`, dueAt };
}

/**
 * A sink lacks the current secret, and the policy says to repair it: with the held secret by
 * delivering it again (no new token, no change to any expiry); by rotating only when the policy asks
 * for that, or when the current secret is known nowhere. Checked after the time-based checks, whose
 * reasons (and rotation) win.
 */
function sinkDrift({ drift, settings, now, secretUnknown }: Input): Decision | undefined {
  const found = repairable(drift ?? []);
  if (found.length === 0 || settings.onDrift === 'report') return undefined;
  const what = `sink drift: ${found.map(describeDrift).join('; ')}`;
  // A sink that only lost its marker still holds the current secret: writing it again restores the
  // marker, and a new token would change nothing it lacks.
  const markerOnly = found.every((d) => d.holdsCurrent === true);
  if (settings.onDrift === 'rotate' && !markerOnly)
    return { action: 'rotate', check: 'sinkDrift', reason: `${what} (onDrift: rotate)`, dueAt: now };
  if (secretUnknown !== undefined) {
    return {
      action: 'rotate',
      check: 'sinkDrift',
      reason: `${what}; the current secret is unknown (${secretUnknown}), so only a new token repairs it`,
      dueAt: now,
    };
  }
  return { action: 'redeliver', check: 'sinkDrift', reason: `${what}; delivering the current secret again`, dueAt: now };
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
