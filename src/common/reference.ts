import * as z from 'zod';

import type { ConfigIssue } from '../errors.js';
import { Secret } from '../secret.js';
import { type Env, readVariable } from './env-variables.js';
import { isLoopbackHost } from './loopback.js';

/**
 * A credential given by reference: the name of an environment variable (or of `NAME_FILE`, a file
 * holding it) rather than its value, which never belongs in a policy file. How sinks take
 * credentials, and notifications their URL, so that a new sink never grows the environment parser.
 */
export interface Reference {
  /** Where the reference is written, for messages: `tokens[0].sinks[1].tokenFrom`. */
  path: string;
  variable: string;
  /** The value is a URL the tool will send to: https, or plain http on loopback only. */
  url?: boolean;
}

/** Why a URL from the environment cannot be sent to; undefined when it can. Never echoes the URL: it may hold a secret. */
export function webhookUrlProblem(value: string, variable: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${variable} is not a URL`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return `${variable} must be an https:// URL (plain http only on loopback)`;
  }
  return undefined;
}

/** The name of an environment variable, as a `…From` field takes it. */
export const variableNameSchema = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be the name of an environment variable (capitals, digits, _), such as VAULT_TOKEN');

/** Each reference that is not set (neither NAME nor NAME_FILE) or cannot be read, as a problem with its path. */
export function checkReferences(references: readonly Reference[], env: Env, cwd: string): ConfigIssue[] {
  return references.flatMap(({ path, variable, url }) => {
    const read = readVariable(env, variable, cwd);
    if ('issue' in read) return [read.issue];
    if (!read.value) return [{ path, message: `${variable} (or ${variable}_FILE) is not set` }];
    const problem = url ? webhookUrlProblem(read.value, variable) : undefined;
    return problem ? [{ path, message: problem }] : [];
  });
}

/** Reads references for a client: the value as a Secret, or undefined when not set. */
export function referenceReader(env: Env, cwd: string): (variable: string) => Secret | undefined {
  return (variable) => {
    const read = readVariable(env, variable, cwd);
    return 'value' in read && read.value ? new Secret(read.value) : undefined;
  };
}
