import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { MINIMUM_NODE, unsupportedNodeMessage } from '../src/supported-node.js';

const PACKAGE = resolve(import.meta.dirname, '..');
const staticImports = (file: string) =>
  [
    ...readFileSync(resolve(PACKAGE, 'src', file), 'utf8').matchAll(
      /^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|^\s*import\s+'([^']+)'/gms,
    ),
  ].map((m) => m[1] ?? m[2]);

describe("the emulator's supported Node.js", () => {
  it('is what its package.json says to npm', () => {
    const pkg = JSON.parse(readFileSync(resolve(PACKAGE, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}`);
  });

  it('refuses an older Node in one line that names the program, the Node found and the one needed', () => {
    expect(unsupportedNodeMessage('token-rotator-emulator', 'v20.20.2', '/usr/bin/node')).toBe(
      'token-rotator-emulator: needs Node.js >= 22.12, found v20.20.2 (/usr/bin/node)',
    );
    expect(unsupportedNodeMessage('token-rotator-emulator', 'v22.12.0', '/usr/bin/node')).toBeUndefined();
  });

  it("is checked before anything else loads: the bin's only static import is the check, which imports nothing", () => {
    expect(staticImports('main.ts')).toEqual(['./supported-node.js']);
    expect(staticImports('supported-node.ts')).toEqual([]);
  });
});
