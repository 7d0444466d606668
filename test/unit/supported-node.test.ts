import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { MINIMUM_NODE, unsupportedNodeMessage } from '../../src/supported-node.js';

const SRC = resolve(import.meta.dirname, '../../src');
const staticImports = (file: string) =>
  [...readFileSync(resolve(SRC, file), 'utf8').matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|^\s*import\s+'([^']+)'/gms)].map(
    (m) => m[1] ?? m[2],
  );

describe('the supported Node.js', () => {
  it('is what package.json says to npm', () => {
    const pkg = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}`);
  });

  it.each(['v18.20.8', 'v20.20.2', 'v21.7.3', 'v22.0.0', 'v22.11.0'])('%s is refused, naming itself and the Node needed', (version) => {
    expect(unsupportedNodeMessage('token-rotator', version, '/usr/bin/node')).toBe(
      `token-rotator: needs Node.js >= 22.12, found ${version} (/usr/bin/node)`,
    );
  });

  it.each(['v22.12.0', 'v22.20.0', 'v23.0.0', 'v24.21.0', 'v25.1.0'])('%s runs', (version) => {
    expect(unsupportedNodeMessage('token-rotator', version, '/usr/bin/node')).toBeUndefined();
  });

  it("is checked before anything else loads: the bin's only static import is the check, which imports nothing", () => {
    // Static imports load before a module's first line runs; on an old Node one of the program's
    // would fail there, before the check could say anything.
    expect(staticImports('cli/main.ts')).toEqual(['../supported-node.js']);
    expect(staticImports('supported-node.ts')).toEqual([]);
  });
});
