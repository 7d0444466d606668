#!/usr/bin/env node
// Runs the test suite (or the vitest arguments given) with every core kept busy by loops this
// script starts and always stops: a CI machine shared with other jobs, on purpose. A test that
// passes here makes no bet on timing. STRESS_LOOPS sets the number of loops (default: one a core).
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const loops = Number(process.env.STRESS_LOOPS ?? availableParallelism());
if (!Number.isInteger(loops) || loops < 0) {
  console.error(`STRESS_LOOPS must be a whole number, not ${JSON.stringify(process.env.STRESS_LOOPS)}`);
  process.exit(2);
}

const busy = Array.from({ length: loops }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopBusy = () => {
  for (const child of busy) child.kill('SIGKILL');
};
process.on('exit', stopBusy);

const args = process.argv.slice(2);
const started = Date.now();
console.error(`test:stress: ${loops} busy loop(s) on ${availableParallelism()} core(s); vitest run ${args.join(' ')}`);
const vitest = spawn(process.execPath, [resolve(root, 'node_modules/vitest/vitest.mjs'), 'run', ...args], {
  cwd: root,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    vitest.kill(signal);
  });
}
vitest.on('exit', (code, signal) => {
  stopBusy();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.error(`test:stress: vitest ended (${signal ?? `exit ${code}`}) after ${seconds} s; load average ${loadavg()[0].toFixed(1)}`);
  process.exit(code ?? 1);
});
