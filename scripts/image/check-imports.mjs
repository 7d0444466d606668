// Imports what the image's code can load, to prove that pruning node_modules broke nothing.
// Run from the application folder (specifiers resolve from this file's folder, as the app's own do):
//   node check-imports.mjs packages  every entry point ("." and each exact subpath export) of every
//                                    package in node_modules, one line each, "ok" or "fails CODE":
//                                    the image build diffs this list before and after pruning.
//   node check-imports.mjs dist      every package specifier in dist/ (import, import(), require);
//                                    exits 1 if one fails to load.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';

const root = import.meta.dirname;

/**
 * Browser-only packages that prune-node-modules.sh removes whole: no Node code imports them (only
 * @azure/identity's browser build does), so they are not entry points of the image.
 */
const BROWSER_ONLY_PACKAGES = new Set(['@azure/msal-browser']);

function packageNames() {
  const names = [];
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(join(root, 'node_modules', entry))) names.push(`${entry}/${scoped}`);
    } else {
      names.push(entry);
    }
  }
  return names.filter((name) => !BROWSER_ONLY_PACKAGES.has(name)).sort();
}

/** A subpath export that names a module: no pattern, no folder, no other file type (README.md, *.d.ts). */
const MODULE_SUBPATH = /^\.(\/[^*]*[^/*])?$/;
const OTHER_FILE = /\.(?!m?js$|cjs$)[a-z]+$|\/LICENSE$/i;

/** "." and the exact subpaths a package exports that are modules. */
function entryPoints(name) {
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  const exportsField = manifest.exports;
  const subpaths =
    exportsField && typeof exportsField === 'object' && Object.keys(exportsField).some((key) => key.startsWith('.'))
      ? Object.keys(exportsField).filter((key) => MODULE_SUBPATH.test(key) && !OTHER_FILE.test(key))
      : ['.'];
  return subpaths.map((subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`));
}

const PACKAGE_SPECIFIER = /^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*(\/[\w./@~-]*)?$/i;

/**
 * The package specifiers of dist/. A bundle (scripts/bundle.mjs) inlines packages with their doc
 * comments, where `import X from 'y'` examples name packages nobody installs: there the imports come
 * from esbuild's metafile (parsed code, never comments), plus the require() and import() calls of
 * the bundle's own code that esbuild cannot see (pino, loaded through createRequire, which esbuild
 * renames require2).
 */
function distSpecifiers() {
  const found = new Set();
  const metafile = join(root, 'dist', 'bundle-meta.json');
  const bundled = existsSync(metafile);
  const pattern = bundled
    ? /(?:\bimport\s*\(\s*|\b(?:require\d*|__require)\s*\(\s*)['"]([^'"]+)['"]/g
    : /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;
  const add = (specifier) => {
    if (!isBuiltin(specifier) && PACKAGE_SPECIFIER.test(specifier)) found.add(specifier);
  };
  if (bundled) {
    for (const output of Object.values(JSON.parse(readFileSync(metafile, 'utf8')).outputs))
      for (const imported of output.imports) if (imported.external) add(imported.path);
  }
  for (const file of readdirSync(join(root, 'dist'), { recursive: true })) {
    if (!file.endsWith('.js')) continue;
    for (const [, specifier] of readFileSync(join(root, 'dist', file), 'utf8').matchAll(pattern)) add(specifier);
  }
  return [...found].sort();
}

async function load(specifier) {
  try {
    await import(specifier);
    return `ok ${specifier}`;
  } catch (error) {
    return `fails ${specifier} ${error?.code ?? error?.name ?? 'error'}`;
  }
}

const mode = process.argv[2];
if (mode !== 'packages' && mode !== 'dist') {
  console.error('usage: node check-imports.mjs packages|dist');
  process.exit(2);
}
const specifiers = mode === 'packages' ? packageNames().flatMap(entryPoints) : distSpecifiers();
const lines = [];
for (const specifier of specifiers) lines.push(await load(specifier));
console.log(lines.join('\n'));
const failed = lines.filter((line) => line.startsWith('fails'));
console.error(`check-imports ${mode}: ${lines.length - failed.length} of ${lines.length} load`);
// Loaded modules may hold the event loop (timers, workers): the answer is in.
process.exit(mode === 'dist' && failed.length > 0 ? 1 : 0);
