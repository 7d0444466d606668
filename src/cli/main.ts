#!/usr/bin/env node
import { run } from './run.js';

const code = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
// Let stdout drain, then leave even if a keep-alive socket or timer is still open.
process.stdout.write('', () => process.exit(code));
