import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
/** The Node the tests run on: the `node` devDependency as the lock file pins it. */
const pinnedNode = (JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> })
  .packages['node_modules/node']!.version;

describe('the image', () => {
  it('is based on the official image of the Node the tests pin, by digest, as an ARG the build can replace', () => {
    const base = /^ARG BASE=(.+)$/m.exec(dockerfile)?.[1];
    expect(base).toMatch(new RegExp(`^docker\\.io/library/node:${pinnedNode.replaceAll('.', '\\.')}-bookworm-slim@sha256:[0-9a-f]{64}$`));
    // Every stage starts from it: no stage floats on a tag of its own.
    const froms = dockerfile.match(/^FROM .*$/gm) ?? [];
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from).toMatch(/^FROM \$\{BASE\}( AS [a-z-]+)?$/);
  });

  it('has a locally assembled base for that same Node (scripts/image/versions.sh)', () => {
    const versions = readFileSync(join(root, 'scripts/image/versions.sh'), 'utf8');
    expect(/^TOOLS_FOR_NODE=(.+)$/m.exec(versions)?.[1]).toBe(pinnedNode);
  });

  it('carries the OCI labels, from build arguments where they vary', () => {
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    for (const label of ['title', 'description', 'licenses'])
      expect(finalStage).toMatch(new RegExp(`org\\.opencontainers\\.image\\.${label}="[^$"]+"`));
    for (const [label, arg] of [
      ['source', 'SOURCE'],
      ['version', 'VERSION'],
      ['revision', 'REVISION'],
      ['created', 'CREATED'],
    ]) {
      expect(finalStage).toContain(`org.opencontainers.image.${label}="\${${arg}}"`);
      expect(finalStage).toMatch(new RegExp(`^ARG .*\\b${arg}=`, 'm'));
    }
  });
});
