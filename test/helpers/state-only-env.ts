import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * An env file beside `envFile` with only what on-call may have: where the state is, without the
 * token service's URL and credentials and without ROTATOR_STATE_KEY (`withKey` keeps the key).
 */
export async function stateOnlyEnv(dir: string, envFile: string, options: { withKey?: boolean } = {}): Promise<string> {
  const secret = options.withKey ? /^ROTATOR_(API_URL|OAUTH_|ACCESS_TOKEN)/ : /^ROTATOR_(API_URL|OAUTH_|ACCESS_TOKEN|STATE_KEY)/;
  const lines = (await readFile(envFile, 'utf8')).split('\n').filter((l) => l && !secret.test(l));
  const file = join(dir, options.withKey ? 'state-and-key.env' : 'state-only.env');
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 });
  return file;
}
