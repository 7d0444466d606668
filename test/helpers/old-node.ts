import { execFileSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

import { unsupportedNodeMessage } from '../../src/supported-node.js';

export interface OldNode {
  path: string;
  /** As `process.version` says it: `v20.20.2`. */
  version: string;
}

/** Why a test that needs an old Node is skipped where there is none. */
export const NO_OLD_NODE = 'no Node.js older than 22.12 on PATH outside node_modules';

/**
 * A Node.js too old for token-rotator on this machine's PATH, leaving out node_modules folders (where
 * the pinned Node 24 is, first on the PATH of `npm test`): the system's Node 20 on these machines.
 */
export function oldNodeOnPath(): OldNode | undefined {
  const seen = new Set<string>();
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder === '' || folder.split(/[\\/]/).includes('node_modules')) continue;
    const candidate = join(folder, 'node');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathSync(candidate);
    if (seen.has(real)) continue;
    seen.add(real);
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (unsupportedNodeMessage('token-rotator', version, candidate) !== undefined) return { path: candidate, version };
  }
  return undefined;
}

/** The one line an unsupported Node must print for `program`, and nothing else (exit 2). */
export function refusalOf(program: string, node: OldNode): string {
  return `${program}: needs Node.js >= 22.12, found ${node.version} (${node.path})\n`;
}
