import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const CLOUD_SDK = /^(@aws-sdk\/|@smithy\/|@google-cloud\/|google-gax|google-auth-library|@grpc\/|@azure\/)/;

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

describe('the cloud SDKs load only when a run has their sink', () => {
  it('the CLI entry point, every command module and every sink type load none of them', () => {
    // The program (cli/start.ts) and the commands are imported when they run, so each one's own
    // static graph is followed too.
    const graph = new Map<string, string[]>();
    for (const entry of ['cli/main.ts', 'cli/start.ts', ...readdirSync(resolve(SRC, 'cli/commands')).map((f) => `cli/commands/${f}`)]) {
      staticImports(resolve(SRC, entry), graph);
    }
    const files = [...graph.keys()].map((f) => f.slice(SRC.length + 1));
    // The check sees the sink registry and every type module through it...
    expect(files).toEqual(expect.arrayContaining(['sinks/registry.ts', 'sinks/azure-key-vault/azure-key-vault-sink.ts']));
    const packages = [...graph.values()].flat().filter((s) => !s.startsWith('.') && !s.startsWith('node:'));
    expect(packages.filter((s) => CLOUD_SDK.test(s))).toEqual([]);
    expect(files.filter((f) => f.endsWith('-client.ts') && f.startsWith('sinks/'))).toEqual([]);
  });

  it.each([
    ['aws-secrets-manager', '@aws-sdk/client-secrets-manager'],
    ['gcp-secret-manager', '@google-cloud/secret-manager'],
    ['azure-key-vault', '@azure/keyvault-secrets'],
  ])('and the check can see one: the %s client module imports %s', (type, sdk) => {
    const client = staticImports(resolve(SRC, `sinks/${type}/${type}-client.ts`));
    expect([...client.values()].flat()).toContain(sdk);
  });
});
