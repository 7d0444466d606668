// Writes dist/policy.schema.json, the policy file's JSON Schema for editors, from the zod schemas
// the code validates with. Run after tsc (npm run build does): it reads the compiled modules.
import { writeFile } from 'node:fs/promises';

import { policyJsonSchema } from '../dist/config/policy-json-schema.js';

const target = new URL('../dist/policy.schema.json', import.meta.url);
await writeFile(target, `${JSON.stringify(policyJsonSchema(), null, 2)}\n`);
