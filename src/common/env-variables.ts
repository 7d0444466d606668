import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import type { ConfigIssue } from '../errors.js';

/** The environment as this process sees it: the real one, with a dotenv file's values under it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** `NAME`, or the content of the file `NAME_FILE` names (without its trailing newline); not both. */
export function readVariable(env: Env, name: string, cwd: string): { value: string | undefined } | { issue: ConfigIssue } {
  const pathVar = `${name}_FILE`;
  const path = env[pathVar];
  if (path === undefined || path === '') return { value: env[name] };
  if (env[name] !== undefined && env[name] !== '')
    return { issue: { path: `env.${pathVar}`, message: `both ${name} and ${pathVar} are set; set one` } };
  try {
    // Secret files written by editors and `kubectl create secret --from-file` often end in a newline.
    return { value: readFileSync(resolve(cwd, path), 'utf8').replace(/\r?\n$/, '') };
  } catch (error) {
    return { issue: { path: `env.${pathVar}`, message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}` } };
  }
}
