import { enableCompileCache } from 'node:module';

// Node keeps the compiled code of every module it loads (ours and our dependencies') in a cache
// folder: NODE_COMPILE_CACHE, else node-compile-cache under the temporary folder. Where that cannot
// be written (a read-only root filesystem without /tmp), Node compiles as before: nothing fails.
// It must be on before the modules below are loaded, hence the dynamic import.
try {
  enableCompileCache();
} catch {
  // An older Node without it, or a folder it cannot create: start without the cache.
}

const argv = process.argv.slice(2);

// Before any module loads, which alone grows the young generation and warms functions for the
// optimizing compilers: see memory-flags.ts. The word anywhere in argv: an option's value spelled
// `daemon` or `plan` costs that run some speed, nothing else. A flag of the user's on the same
// subject wins.
const memoryTable = argv.includes('daemon') ? 'DAEMON_MEMORY_FLAGS' : argv.includes('plan') ? 'PLAN_MEMORY_FLAGS' : undefined;
if (memoryTable) {
  const flags = await import('./memory-flags.js');
  flags.setMemoryFlags(flags[memoryTable], process.execArgv, process.env.NODE_OPTIONS);
}

/** `--version` alone is answered before the command line parser is even loaded. */
async function version(): Promise<number> {
  const { packageVersion } = await import('../version.js');
  process.stdout.write(`${packageVersion()}\n`);
  return 0;
}

async function command(): Promise<number> {
  const { run } = await import('./run.js');
  return run(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  });
}

const code = argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V') ? await version() : await command();
// Let stdout drain, then leave even if a keep-alive socket or timer is still open.
process.stdout.write('', () => process.exit(code));
