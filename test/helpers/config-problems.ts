import { parsePolicy } from '../../src/config/load-policy.js';
import { ConfigError } from '../../src/errors.js';

/** The problems `load` reports as `path: message`; fails the test when it accepts. */
export async function configProblems(load: () => unknown): Promise<string[]> {
  try {
    await load();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected the policy to be refused');
}

/** The problems of a policy text, as read from `file`; fails the test when it is accepted. */
export function policyProblems(text: string, file = '/etc/rotator/rotation.yaml'): string[] {
  try {
    parsePolicy(text, file);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected the policy to be refused');
}
