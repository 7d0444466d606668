#!/usr/bin/env node
// The mutation gate: reads Stryker's JSON report and fails (exit 1) when any mutated file scores
// below its threshold. Prints each file's score beside its threshold, then every mutant kept out of
// the score by a `Stryker disable` comment with the reason written beside it (the equivalent
// mutants), so that the list is read at each run rather than kept by hand somewhere else.
//
//   node scripts/mutation/gate.mjs [report.json]
import { readFileSync } from 'node:fs';

import { calculateMetrics } from 'mutation-testing-metrics';

import { thresholdFor } from './thresholds.mjs';

const reportPath = process.argv[2] ?? 'reports/mutation/mutation.json';
let report;
try {
  report = JSON.parse(readFileSync(reportPath, 'utf8'));
} catch (error) {
  console.error(`mutation gate: cannot read ${reportPath} (${error.code ?? error.message}); run npm run mutation first`);
  process.exit(2);
}

/** Every file of the report, with its metrics, flattened out of the directory tree. */
function filesOf(result, out = []) {
  if (result.file) out.push({ name: result.file.name, metrics: result.metrics, file: result.file });
  for (const child of result.childResults) filesOf(child, out);
  return out;
}

const files = filesOf(calculateMetrics(report.files)).sort((a, b) => a.name.localeCompare(b.name));
const below = [];
const width = Math.max(...files.map((f) => f.name.length));
console.log(`${'file'.padEnd(width)}  score  threshold  killed  survived  no cov  ignored`);
for (const { name, metrics } of files) {
  const score = metrics.totalValid === 0 ? 100 : metrics.mutationScore;
  const threshold = thresholdFor(name);
  const mark = score < threshold ? '  BELOW' : '';
  if (mark) below.push({ name, score, threshold });
  console.log(
    `${name.padEnd(width)}  ${score.toFixed(1).padStart(5)}  ${String(threshold).padStart(9)}  ${String(metrics.totalDetected).padStart(6)}  ${String(metrics.survived).padStart(8)}  ${String(metrics.noCoverage).padStart(6)}  ${String(metrics.ignored).padStart(7)}${mark}`,
  );
}

const equivalent = files.flatMap(({ name, file }) =>
  file.mutants
    .filter((m) => m.status === 'Ignored' && !/log call/.test(m.statusReason ?? ''))
    .map((m) => `  ${name}:${m.location.start.line}  ${m.mutatorName}  ${m.statusReason ?? '(no reason given)'}`),
);
console.log(`\nequivalent mutants kept out of the score (${equivalent.length}):`);
for (const line of equivalent) console.log(line);

if (below.length > 0) {
  console.error(`\nmutation gate: FAILED, ${below.length} file(s) below threshold:`);
  for (const { name, score, threshold } of below) console.error(`  ${name}: ${score.toFixed(1)}% < ${threshold}%`);
  process.exit(1);
}
console.log(`\nmutation gate: passed, ${files.length} file(s) at or above threshold`);
