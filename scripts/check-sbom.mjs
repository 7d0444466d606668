#!/usr/bin/env node
// `npm run sbom:check -- FILE`: checks that a CycloneDX SBOM lists exactly the production tree that
// `npm ls --omit=dev --workspaces=false --all` shows for this checkout (scripts/lib/sbom-problems.mjs
// says what is checked). Exit 0 when complete, 1 with every problem named, 2 on a usage error.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { checkSbom } from './lib/check-sbom-file.mjs';
import { exitWithProblems, parseScriptArguments } from './lib/script-arguments.mjs';

const SCRIPT = 'sbom:check';
const { positionals } = parseScriptArguments(SCRIPT, {});
if (positionals.length !== 1) exitWithProblems(SCRIPT, [`expected one argument, the SBOM file (got ${positionals.length})`]);
const file = resolve(positionals[0]);
let text;
try {
  text = await readFile(file, 'utf8');
} catch (error) {
  exitWithProblems(SCRIPT, [`${file}: ${error.message}`]);
}
let bom;
try {
  bom = JSON.parse(text);
} catch (error) {
  exitWithProblems(SCRIPT, [`${file}: not JSON (${error.message})`]);
}
const { problems, components } = await checkSbom(bom);
for (const problem of problems) process.stderr.write(`${SCRIPT}: ${file}: ${problem}\n`);
if (problems.length > 0) process.exit(1);
process.stdout.write(`${file}: complete, ${components} packages of the production tree\n`);
