import type { z } from 'zod';

import type { UsageIssue } from '../usage-error.js';

/** `['tokens', 1, 'name']` under `seed` -> `seed.tokens[1].name` */
function formatPath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  let out = prefix;
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? String(part) : `.${String(part)}`;
  return out === '' ? '(top level)' : out;
}

/** Each problem zod found in a seed, at its full path; an unknown key is named one by one. */
export function seedIssues(issues: readonly z.core.$ZodIssue[], prefix: string): UsageIssue[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: formatPath(prefix, [...issue.path, key]), message: 'unknown key' }))
      : [{ path: formatPath(prefix, issue.path), message: issue.message }],
  );
}
