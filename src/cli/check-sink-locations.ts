import { sep } from 'node:path';

import type { Policy } from '../config/types.js';
import type { ConfigIssue } from '../errors.js';
import { realLocationSync } from '../fs/path-links.js';
import { sinkLocalPath } from '../sinks/registry.js';

const isWithin = (path: string, folder: string) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);

/**
 * Sinks must not write where token-rotator keeps its own files: inside the state folder a commit
 * erases or overwrites them (both secrets gone), and over the policy or a credential file the next
 * run cannot start. Compared by real location, so a symbolic link or `..` does not hide it.
 */
export function checkSinkLocations(policy: Policy, own: { stateDir: string; environmentFiles: string[] }): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const stateDir = realLocationSync(own.stateDir);
  const protectedFiles = new Map<string, string>([
    [realLocationSync(policy.file), 'the policy file'],
    ...own.environmentFiles.map((file): [string, string] => [realLocationSync(file), `${file}, which the environment is read from`]),
  ]);
  policy.tokens.forEach((token, t) => {
    token.sinks.forEach((sink, s) => {
      const local = sinkLocalPath(sink);
      if (local === undefined) return;
      const at = `tokens[${t}].sinks[${s}]`;
      if (isWithin(local, stateDir) || isWithin(stateDir, local)) {
        issues.push({
          path: at,
          message: `writes inside the state folder ${own.stateDir} (ROTATOR_STATE_DIR), where a commit would erase or overwrite it; deliver secrets elsewhere`,
        });
      }
      const protectedFile = protectedFiles.get(local);
      if (protectedFile) issues.push({ path: at, message: `would overwrite ${protectedFile}` });
    });
  });
  return issues;
}
