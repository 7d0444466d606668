#!/usr/bin/env node
// npm run mutation: Stryker over every target file of stryker.config.mjs, then the gate.
// npm run mutation -- --since REF: only the target files changed since REF (git diff REF), for CI
// and for a quick look at a change; nothing to mutate is a pass.
import { execFileSync, spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { parseArgs } from 'node:util';

import config from '../../stryker.config.mjs';

const { values } = parseArgs({ options: { since: { type: 'string' } } });

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

const stryker = ['exec', '--', 'stryker', 'run'];
if (values.since) {
  const all = targets();
  const changed = changedSince(values.since).filter((file) => all.has(file));
  if (changed.length === 0) {
    console.log(`mutation: no target file changed since ${values.since}; nothing to mutate`);
    process.exit(0);
  }
  console.log(`mutation: ${changed.length} target file(s) changed since ${values.since}: ${changed.join(', ')}`);
  stryker.push('--mutate', changed.join(','));
}
run('npm', stryker);
run(process.execPath, ['scripts/mutation/gate.mjs']);
