#!/usr/bin/env node
// npm run mutation: Stryker over every target file of stryker.config.mjs, then the gate.
// npm run mutation -- --since REF: only the target files changed since REF (git diff REF), for a
// quick look at a change; nothing to mutate is a pass.
// npm run mutation -- --since-full-run: since the commit of the last full run that passed, as
// recorded in scripts/mutation/full-run-base (CI: the full run does not fit its time budget).
import { execFileSync, spawnSync } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import config from '../../stryker.config.mjs';

const { values } = parseArgs({ options: { since: { type: 'string' }, 'since-full-run': { type: 'boolean' } } });
const BASE_FILE = 'scripts/mutation/full-run-base';

function targets() {
  return new Set(config.mutate.flatMap((pattern) => globSync(pattern)));
}

function changedSince(ref) {
  const out = execFileSync('git', ['diff', '--name-only', '--diff-filter=d', ref, '--', 'src'], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean);
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** The recorded base, when this clone has it (a shallow clone may not): else a full run. */
function fullRunBase() {
  const base = readFileSync(BASE_FILE, 'utf8').trim();
  const known = spawnSync('git', ['cat-file', '-e', `${base}^{commit}`]).status === 0;
  if (!known) console.log(`mutation: the last full run's commit ${base} is not in this clone; mutating every target file`);
  return known ? base : undefined;
}

const since = values['since-full-run'] ? fullRunBase() : values.since;
/** The commit measured: taken before the run, which may outlast a commit made meanwhile. */
const measured = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const stryker = ['exec', '--', 'stryker', 'run'];
if (since) {
  const all = targets();
  const changed = changedSince(since).filter((file) => all.has(file));
  if (changed.length === 0) {
    console.log(`mutation: no target file changed since ${since}; nothing to mutate`);
    process.exit(0);
  }
  console.log(`mutation: ${changed.length} target file(s) changed since ${since}: ${changed.join(', ')}`);
  stryker.push('--mutate', changed.join(','));
}
run('npm', stryker);
run(process.execPath, ['scripts/mutation/gate.mjs']);
if (!since) {
  console.log(
    `mutation: a full run passed at ${measured}; CI mutates what changed since the commit in ${BASE_FILE}: record this one there`,
  );
}
