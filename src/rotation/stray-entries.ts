import type { Journal } from '../state/journal.js';
import type { TokenSet } from './token-spec.js';

/** A journal entry whose name is no longer in the policy: it may hold the only copy of a secret. */
export interface StrayEntry {
  name: string;
  /** What the entry holds, or `unreadable` when it cannot be read. */
  phase: 'intent' | 'staged' | 'held' | 'unreadable';
  message: string;
}

/**
 * Every unfinished rotation whose name left the policy. No run touches them (a run only handles
 * the policy's names), so every command that reports on the state says so, and the daemon does.
 */
export async function findStrayEntries(policy: TokenSet, journal: Journal): Promise<StrayEntry[]> {
  const names = new Set(policy.tokens.map((t) => t.name));
  let listed: string[];
  try {
    listed = await journal.names();
  } catch (error) {
    // The journal cannot be listed (its disk failed): say so, as a stray would be, not crash the run.
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return [
      {
        name: '(journal)',
        phase: 'unreadable',
        message: `cannot list the journal to find unfinished rotations of names no longer in the policy (${code})`,
      },
    ];
  }
  const strays = listed.filter((name) => !names.has(name));
  return Promise.all(
    strays.map(async (name): Promise<StrayEntry> => {
      // Why it cannot be read matters: damaged, or (in a cluster) no longer granted to the rotator.
      const { phase, why } = await journal.read(name).then(
        (entry) => ({ phase: entry?.phase ?? ('unreadable' as const), why: undefined }),
        (error: unknown) => ({ phase: 'unreadable' as const, why: (error as Error)?.message }),
      );
      const holds =
        phase === 'staged' || phase === 'held'
          ? ` It holds a new secret (${phase}).`
          : why
            ? ` It cannot be read (${why}); it may hold a new secret.`
            : ` (${phase})`;
      return {
        name,
        phase,
        message:
          `an unfinished rotation of '${name}' is in ${journal.describe(name)}, but '${name}' is no longer in the policy.${holds} ` +
          'Put the name back to let the rotation finish, or deal with the entry by hand and remove it',
      };
    }),
  );
}
