import type { z } from 'zod';

import type { ConfigIssue } from '../errors.js';
import { didYouMean } from './nearest-name.js';
import { allowedKeysOf } from './strict-object.js';

/** `['tokens', 1, 'sinks', 0, 'path']` -> `tokens[1].sinks[0].path` */
export function formatPath(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}

function describeInput(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  return typeof input === 'object' ? 'a mapping' : typeof input;
}

/**
 * YAML reads `123456`, `1e5` and `true` as a number or a boolean: an id or a name written bare is
 * then not a string, and the fix is quotes.
 */
function quoteHint(expected: string, input: unknown): string {
  if (expected !== 'string' || (typeof input !== 'number' && typeof input !== 'boolean')) return '';
  return `: write it in quotes to keep it a string (YAML read it as ${String(input)})`;
}

/**
 * Zod's default wording is written for developers; these are for the person editing a policy file.
 * Every issue keeps its full path, and unknown keys are reported one per key with what is allowed
 * and the allowed key it most likely meant.
 */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = issue.path as PropertyKey[];
    switch (issue.code) {
      case 'invalid_type': {
        const input = (issue as { input?: unknown }).input;
        out.push({
          path: formatPath(path, prefix),
          message:
            input === undefined ? 'required' : `expected ${issue.expected}, got ${describeInput(input)}${quoteHint(issue.expected, input)}`,
        });
        break;
      }
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          out.push({
            path: formatPath([...path, key], prefix),
            message: `unknown key${didYouMean(String(key), allowedKeysOf(issue.message))} (${issue.message})`,
          });
        }
        break;
      case 'invalid_value':
        out.push({
          path: formatPath(path, prefix),
          message:
            issue.values.length === 1
              ? `must be ${JSON.stringify(issue.values[0])}`
              : `must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`,
        });
        break;
      default:
        out.push({ path: formatPath(path, prefix), message: issue.message });
    }
  }
  return out;
}
