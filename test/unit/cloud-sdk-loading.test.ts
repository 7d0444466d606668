import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const SINK_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/sinks/aws-secrets-manager');

/** Every module a source file loads when it is imported: static imports and re-exports, followed through relative paths. */
function staticImports(file: string, seen = new Map<string, string[]>()): Map<string, string[]> {
  if (seen.has(file)) return seen;
  const source = readFileSync(file, 'utf8');
  const specifiers = [...source.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|^\s*import\s+'([^']+)'/gms)].map(
    (m) => (m[1] ?? m[2])!,
  );
  seen.set(file, specifiers);
  for (const specifier of specifiers) {
    if (specifier.startsWith('.')) staticImports(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')), seen);
  }
  return seen;
}

describe('the aws-secrets-manager sink type', () => {
  it('loads no AWS SDK with the policy: only open() imports the client module, which does', () => {
    const graph = staticImports(resolve(SINK_DIR, 'aws-secrets-manager-sink.ts'));
    const packages = [...graph.values()].flat().filter((s) => !s.startsWith('.') && !s.startsWith('node:'));
    expect(packages.filter((s) => s.startsWith('@aws-sdk/') || s.startsWith('@smithy/'))).toEqual([]);
    expect([...graph.keys()].map((f) => f.slice(SINK_DIR.length + 1))).not.toContain('aws-secrets-manager-client.ts');
    // And the check can see one: the client module does import the SDK.
    const client = staticImports(resolve(SINK_DIR, 'aws-secrets-manager-client.ts'));
    expect([...client.values()].flat()).toContain('@aws-sdk/client-secrets-manager');
  });
});
