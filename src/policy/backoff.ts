export interface BackoffSettings {
  baseMs: number;
  capMs: number;
}

/** One minute after the first failure, doubling, at most an hour: a broken name is retried, not hammered. */
export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 60_000, capMs: 3600_000 };

/**
 * Until when scheduled checks leave a failing name alone; null when they need not. Reset by the next
 * success; an emergency `rotate` ignores it.
 */
export function backoffUntil(
  input: { consecutiveFailures: number; lastFailureAt: Date | null },
  settings: BackoffSettings = DEFAULT_BACKOFF,
): Date | null {
  if (input.consecutiveFailures <= 0 || !input.lastFailureAt) return null;
  const delay = Math.min(settings.capMs, settings.baseMs * 2 ** Math.min(input.consecutiveFailures - 1, 30));
  return new Date(input.lastFailureAt.getTime() + delay);
}
