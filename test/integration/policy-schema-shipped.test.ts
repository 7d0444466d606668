import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { policyJsonSchema } from '../../src/config/policy-json-schema.js';

// Reads the build's output, so it is an integration test: `npm run test:unit` needs no build.
const root = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

describe("the policy's JSON Schema", () => {
  it('is the one the build ships (dist/policy.schema.json, in the package)', () => {
    expect(JSON.parse(read('dist/policy.schema.json'))).toEqual(policyJsonSchema());
    const pkg = JSON.parse(read('package.json')) as { files: string[]; exports: Record<string, string> };
    expect(pkg.files).toContain('dist/policy.schema.json');
    expect(pkg.exports['./policy.schema.json']).toBe('./dist/policy.schema.json');
  });
});
