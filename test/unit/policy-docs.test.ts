import { describe, expect, it } from 'vitest';

import { policyFieldTables, withGeneratedRegion } from '../../scripts/lib/policy-docs.mjs';
import { policyJsonSchema } from '../../src/config/policy-json-schema.js';
import { readPage } from '../helpers/doc-pages.js';

describe('the policy reference (docs/reference/policy.md)', () => {
  it("lists the schema's fields as the generator writes them (node scripts/generate-policy-docs.mjs)", () => {
    const page = readPage('docs/reference/policy.md');
    expect(page).toBe(withGeneratedRegion(page, policyFieldTables(policyJsonSchema())));
  });

  it('names every field of a token and every option of each sink type, with its default', () => {
    const tables = policyFieldTables(policyJsonSchema());
    expect(tables).toContain('| `renewBefore` | text |');
    expect(tables).toContain('| `onDrift` | `redeliver` \\| `rotate` \\| `report` |');
    expect(tables).toContain('### Sink `azure-key-vault`');
    expect(tables).toContain('| `format` | `raw` \\| `env` \\| `json` | `raw` |');
  });

  it('refuses a page without the markers of its generated region', () => {
    expect(() => withGeneratedRegion('# Policy\n', 'tables')).toThrow(/lacks the markers/);
  });
});
