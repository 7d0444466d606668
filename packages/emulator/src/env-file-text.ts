/**
 * `NAME=value` lines that dotenv reads back as they are: what `--env-out` writes for a rotator, and
 * what tests and the bench write the same way. The emulator's values (URLs, ids, base64url
 * secrets) need no quoting.
 */
export function envFileText(env: Record<string, string>): string {
  return (
    Object.entries(env)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n') + '\n'
  );
}
