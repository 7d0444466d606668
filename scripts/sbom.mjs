#!/usr/bin/env node
// `npm run sbom [-- --out FILE]`: writes a CycloneDX 1.6 SBOM (JSON) of token-rotator's production
// dependency tree, the root package's alone (no workspace package), with @cyclonedx/cyclonedx-npm
// (from node_modules, no network), then checks it against `npm ls` (scripts/check-sbom.mjs) and only
// then puts it at FILE (default release/sbom.cdx.json, a gitignored folder). Not `npm sbom`: in a
// checkout with dev dependencies installed, it leaves out runtime packages that a dev dependency
// also pulls in.
//
// The output is reproducible (no timestamp, no random serial number): the same checkout gives the
// same bytes, so that anyone can regenerate a release's SBOM and compare its checksum.
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { checkSbom } from './lib/check-sbom-file.mjs';
import { OMIT } from './lib/production-tree.mjs';
import { ROOT } from './lib/root.mjs';
import { exitWithProblems, parseScriptArguments } from './lib/script-arguments.mjs';

const SCRIPT = 'sbom';
const { values, positionals } = parseScriptArguments(SCRIPT, { out: { type: 'string' } });
if (positionals.length > 0) exitWithProblems(SCRIPT, [`unexpected argument ${positionals[0]} (the output file is --out FILE)`]);
const out = resolve(values.out ?? join(ROOT, 'release/sbom.cdx.json'));

/** The tool's own entry, run by this Node: its package exports no bin path to resolve. */
function cyclonedxCli() {
  const entry = createRequire(import.meta.url).resolve('@cyclonedx/cyclonedx-npm');
  return join(dirname(entry), 'bin/cyclonedx-npm-cli.js');
}

await mkdir(dirname(out), { recursive: true });
const partial = `${out}.partial-${process.pid}`;
try {
  await promisify(execFile)(
    process.execPath,
    [
      cyclonedxCli(),
      ...OMIT.flatMap((type) => ['--omit', type]),
      '--no-workspaces',
      '--spec-version',
      '1.6',
      '--output-format',
      'JSON',
      '--output-reproducible',
      '--validate',
      '--output-file',
      partial,
      join(ROOT, 'package.json'),
    ],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  const { problems, components } = await checkSbom(JSON.parse(await readFile(partial, 'utf8')));
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`${SCRIPT}: the SBOM is incomplete: ${problem}\n`);
    process.exitCode = 1;
  } else {
    await rename(partial, out);
    process.stdout.write(`${out}: CycloneDX 1.6, ${components} packages of the production tree\n`);
  }
} catch (error) {
  process.stderr.write(`${SCRIPT}: cyclonedx-npm failed: ${error.stderr || error.message}\n`);
  process.exitCode = 1;
} finally {
  await rm(partial, { force: true });
}
