// Bundles the token-rotator CLI (src/cli/main.ts) with esbuild into dist/: dist/cli/main.js stays the
// bin, and every dynamic import() in src becomes a chunk of its own under dist/chunks/, so a command
// still loads only what it uses (one file without splitting starts slower than the unbundled tree).
// Start-up reads a few chunks instead of hundreds of files under node_modules.
//
//   node scripts/bundle.mjs               after tsc (npm run build): overwrites tsc's dist/cli/main.js;
//                                         the rest of tsc's output stays for the bench and the tests.
//   node scripts/bundle.mjs --production [--outdir DIR]
//                                         the image's build: a clean dist/ (or DIR) with the bundle
//                                         alone. The emulator, the Kubernetes double and the demo are
//                                         workspace packages (packages/), which src never imports.
//
// Source maps are linked and carry the sources: NODE_OPTIONS=--enable-source-maps maps a stack trace
// back to src/ (not on by default: parsing the maps costs start-up). dist/bundle-meta.json (esbuild's
// metafile) says which modules each output file holds: the start-up tests read it.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { build } from 'esbuild';

const root = new URL('..', import.meta.url);
const production = process.argv.includes('--production');
const outdirArg = process.argv.indexOf('--outdir');
const outdir = outdirArg > 0 ? pathToFileURL(`${resolve(process.argv[outdirArg + 1])}/`) : new URL('dist/', root);

const { version } = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));

/**
 * Left to node_modules: the cloud SDKs (loaded only by their sink clients; google-gax reads proto
 * files next to its code), pino and pino-pretty (loaded through createRequire, and pino starts its
 * transports from files by path), and oidc-provider (the emulator's, never the CLI's: kept here so
 * that a stray import of it fails the build's tests instead of being bundled). commander as well:
 * bundling it changes start-up, which is measured and left for its own change.
 */
export const EXTERNAL = [
  '@aws-sdk/*',
  '@smithy/*',
  '@google-cloud/*',
  'google-gax',
  '@grpc/*',
  '@azure/*',
  'pino',
  'pino-pretty',
  'oidc-provider',
  'commander',
];

/**
 * A dependency's own source map can name sources its package does not ship (openid-client and
 * oauth4webapi map to their src/*.ts): chained, the bundle's map would name files nobody has. Mapped
 * to the JavaScript esbuild read instead, every map carries the source it maps.
 */
const dependencyCodeAsShipped = {
  name: 'dependency-code-as-shipped',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async ({ path }) => ({
      contents: (await readFile(path, 'utf8')).replace(/^\/\/# sourceMappingURL=.*$/gm, ''),
      loader: 'js',
    }));
  },
};

// Chunk names carry a content hash: a rebuild must not leave the previous build's chunks beside its own.
await rm(production ? outdir : new URL('chunks/', outdir), { recursive: true, force: true });

const result = await build({
  absWorkingDir: fileURLToPath(root),
  entryPoints: ['src/cli/main.ts'],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22.12',
  outdir: fileURLToPath(outdir),
  outbase: 'src',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  metafile: true,
  legalComments: 'linked',
  external: EXTERNAL,
  // The version, fixed at build time: the bundle's files are not where ../package.json points.
  define: { __TOKEN_ROTATOR_VERSION__: JSON.stringify(version) },
  // CommonJS dependencies inlined into an ES module still call require().
  banner: {
    js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);",
  },
  plugins: [dependencyCodeAsShipped],
  logLevel: 'warning',
});

await writeFile(new URL('bundle-meta.json', outdir), `${JSON.stringify(result.metafile)}\n`);
