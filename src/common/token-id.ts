/**
 * A token id travels as one URL path segment (`/v2/tokens/{id}`) and into state records. Ids come
 * from the policy and from the service's answers, so either could be hostile: `..` or `a/b` would
 * address another resource once the URL is normalised. These rules keep an id one plain segment.
 */
export const MAX_TOKEN_ID_LENGTH = 256;

/** Why `id` cannot be a token id, or undefined when it can. */
export function tokenIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string') return 'must be a string';
  if (id.length === 0) return 'must not be empty';
  if (id.length > MAX_TOKEN_ID_LENGTH) return `must be at most ${MAX_TOKEN_ID_LENGTH} characters`;
  if (id === '.' || id === '..') return `'${id}' is not a token id: it would address another resource`;
  // eslint-disable-next-line no-control-regex
  if (/[/\\\s\u0000-\u001f\u007f]/.test(id)) return 'must not contain "/", "\\", whitespace or control characters';
  return undefined;
}

export function isTokenId(id: unknown): id is string {
  return tokenIdProblem(id) === undefined;
}
