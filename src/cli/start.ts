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

// Before any module loads, which alone grows the young generation: see young-generation.ts. The
// word anywhere in argv: an option's value spelled `daemon` costs that run a little speed, nothing else.
if (argv.includes('daemon')) {
  const { keepYoungGenerationSmall } = await import('../daemon/young-generation.js');
  keepYoungGenerationSmall(process.execArgv, process.env.NODE_OPTIONS);
}

// `plan` checks thousands of tokens in one run and keeps only a line of each: left alone, V8 grows
// the young generation to 2 × 32 MB and lets the garbage promoted out of it reach four times the live
// heap before a full collection (5,000 tokens: 285 MB peak). Kept small, and the old generation
// collected at three times the live heap, the same plan peaks at about 170 MB for 11% more CPU time.
// A heap flag of the user's wins.
if (argv.includes('plan')) {
  const { keepYoungGenerationSmall } = await import('../daemon/young-generation.js');
  keepYoungGenerationSmall(process.execArgv, process.env.NODE_OPTIONS);
  if (![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /heap[-_]growing/.test(arg))) {
    const { setFlagsFromString } = await import('node:v8');
    setFlagsFromString('--heap-growing-percent=200');
  }
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
