// Writes the field tables of docs/reference/policy.md from dist/policy.schema.json (run
// `npm run build` first). With --check it writes nothing and exits 1 when the page differs.
import { readFile, writeFile } from 'node:fs/promises';

import { policyFieldTables, withGeneratedRegion } from './lib/policy-docs.mjs';

const schemaFile = new URL('../dist/policy.schema.json', import.meta.url);
const pageFile = new URL('../docs/reference/policy.md', import.meta.url);

const schema = JSON.parse(await readFile(schemaFile, 'utf8'));
const page = await readFile(pageFile, 'utf8');
const generated = withGeneratedRegion(page, policyFieldTables(schema));

if (generated === page) {
  console.log('docs/reference/policy.md: up to date');
} else if (process.argv.includes('--check')) {
  console.error('docs/reference/policy.md: its field tables differ from the schema; run node scripts/generate-policy-docs.mjs');
  process.exitCode = 1;
} else {
  await writeFile(pageFile, generated);
  console.log('docs/reference/policy.md: field tables written');
}
