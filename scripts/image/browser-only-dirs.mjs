// Prints, one a line, the folders of packages in a node_modules that a package's `exports` reaches
// only through the "browser" or "react-native" conditions: builds that Node never resolves (it
// matches "node", "import", "require", "default"). A folder that any other condition, `main`,
// `module` or `bin` names is kept. Only prints: prune-node-modules.sh deletes, check-imports.mjs proves.
// Usage: node browser-only-dirs.mjs <node_modules>
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BROWSER_CONDITIONS = new Set(['browser', 'react-native']);

/** The folder a target lies in, as far as two levels down: "./dist/browser/index.js" -> "dist/browser". */
function folderOf(target) {
  const parts = target.replace(/^\.\//, '').split('/').slice(0, -1);
  return parts.slice(0, 2).join('/');
}

/** Every target of an exports value, with whether it was reached through a browser-only condition. */
function* targets(value, browserOnly = false) {
  if (typeof value === 'string') yield { target: value, browserOnly };
  else if (Array.isArray(value)) for (const item of value) yield* targets(item, browserOnly);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) yield* targets(inner, browserOnly || BROWSER_CONDITIONS.has(key));
  }
}

export function browserOnlyFolders(manifest) {
  const browser = new Set();
  const kept = new Set();
  for (const { target, browserOnly } of targets(manifest.exports)) (browserOnly ? browser : kept).add(folderOf(target));
  for (const field of [
    manifest.main,
    manifest.module,
    ...Object.values(typeof manifest.bin === 'object' ? manifest.bin : { bin: manifest.bin }),
  ]) {
    if (typeof field === 'string') kept.add(folderOf(field));
  }
  // A folder is kept if a kept target lies in it, above it or below it (a file at the package's
  // root keeps no folder).
  const overlaps = (a, b) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  return [...browser].filter((folder) => folder !== '' && ![...kept].some((other) => other !== '' && overlaps(folder, other)));
}

function* packageDirs(nodeModules) {
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const dir = join(nodeModules, entry);
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(dir)) yield* packageAndNested(join(dir, scoped));
    } else {
      yield* packageAndNested(dir);
    }
  }
}

function* packageAndNested(dir) {
  if (existsSync(join(dir, 'package.json'))) yield dir;
  const nested = join(dir, 'node_modules');
  if (existsSync(nested)) yield* packageDirs(nested);
}

if (import.meta.main) {
  for (const dir of packageDirs(process.argv[2])) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const folder of browserOnlyFolders(manifest)) {
      const path = join(dir, folder);
      if (existsSync(path) && statSync(path).isDirectory()) console.log(path);
    }
  }
}
