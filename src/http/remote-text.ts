import { scrubSecrets } from '../secret.js';

/**
 * Text that came from a peer (a service's error message, an authorization server's
 * error_description, a program's stderr) is repeated to operators, stored as a last failure and
 * posted to webhooks. A careless peer may echo a secret we hold, whole, wrapped, encoded or cut:
 * every known secret is scrubbed first, before the text is flattened or cut. It may also hold one
 * we have never seen, which cannot be scrubbed by value: anything shaped like a token is masked,
 * and the text is kept short.
 */
export const MASK = '[MASKED]';
export const MAX_REMOTE_TEXT = 300;

/** The service's token prefixes: `xaat-` (API tokens), `xapt-` (personal access tokens). */
const PREFIXED_TOKEN = /\bxa[a-z]t-[^\s"'`,;)\]}]*/gi;
/** A JWT: three base64url parts. */
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
/** A long run of token alphabet: base64, base64url, hex, with separators some tokens use. */
const LONG_RUN = /[A-Za-z0-9+/=_.~-]{20,}/g;

/** A run that looks random rather than like words: letters and digits mixed, or mixed case at length. */
function looksRandom(run: string): boolean {
  const digits = run.replace(/[^0-9]/g, '').length;
  const letters = run.replace(/[^A-Za-z]/g, '').length;
  if (digits >= 2 && letters >= 2) return true;
  return run.length >= 32 && /[a-z]/.test(run) && /[A-Z]/.test(run);
}

export function maskTokenLike(text: string): string {
  return text
    .replace(PREFIXED_TOKEN, MASK)
    .replace(JWT, MASK)
    .replace(LONG_RUN, (run) => (looksRandom(run) ? MASK : run));
}

/** One line, known secrets scrubbed, token-shaped parts masked, at most `max` characters. */
export function remoteText(text: string, max = MAX_REMOTE_TEXT): string {
  const flat = maskTokenLike(scrubSecrets(text).replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
