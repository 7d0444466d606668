// Fills Node's compile cache (NODE_COMPILE_CACHE, which must be set) for the bundled CLI in DIST
// (default: the dist/ beside this script's checkout), at image build time. The image runs on a
// read-only root file system, where the cache could never be written at run time; baked in, it is
// read at every start (keyed on the Node version and each file's path and contents, all fixed in
// the image) and Node's failed writes for anything missing are silent.
//
// Every chunk is imported once, with the packages it imports (the cloud SDKs, pino, commander),
// except the one that runs the program (src/cli/start.ts): the image's build runs the CLI itself
// (`--version`, `--help`) for it and for the entry point. Importing a chunk only defines functions.
// Usage: NODE_COMPILE_CACHE=DIR node scripts/image/warm-compile-cache.mjs [DIST]
import { readFile } from 'node:fs/promises';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

if (!getCompileCacheDir()) throw new Error('set NODE_COMPILE_CACHE to the folder to fill');
const dist = resolve(process.argv[2] ?? new URL('../../dist', import.meta.url).pathname);
const meta = JSON.parse(await readFile(resolve(dist, 'bundle-meta.json'), 'utf8'));
// The metafile names outputs relative to the repository; their file names are what matters here.
const chunks = Object.entries(meta.outputs)
  .filter(([output, { entryPoint }]) => output.endsWith('.js') && entryPoint !== 'src/cli/main.ts' && entryPoint !== 'src/cli/start.ts')
  .map(([output]) => resolve(dist, output.slice(output.lastIndexOf('/chunks/') + 1)));
for (const chunk of chunks) await import(pathToFileURL(chunk).href);
flushCompileCache();
console.log(`compile cache ${getCompileCacheDir()}: ${chunks.length} chunks`);
