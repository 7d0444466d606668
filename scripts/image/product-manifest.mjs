// `node scripts/image/product-manifest.mjs [--omit-dev]`, in the image build before `npm ci`:
// rewrites package.json and package-lock.json in the current folder to the product alone (no
// `workspaces`; the lock reduced to the product's dependency closure, see ../lib/product-lock.mjs),
// so that `npm ci` installs no workspace package and nothing only a workspace package needs.
// --omit-dev also leaves the devDependencies out, for the production node_modules.
// Exit 0 when rewritten, 1 when the product's closure reaches a workspace package or the lock lacks
// a package, 2 on a usage error.
import { readFile, writeFile } from 'node:fs/promises';

import { productLock } from '../lib/product-lock.mjs';
import { exitWithProblems, parseScriptArguments } from '../lib/script-arguments.mjs';

const SCRIPT = 'product-manifest';
const { values, positionals } = parseScriptArguments(SCRIPT, { 'omit-dev': { type: 'boolean', default: false } });
if (positionals.length > 0) exitWithProblems(SCRIPT, [`unexpected argument ${positionals[0]}`]);

const readJson = async (/** @type {string} */ file) => JSON.parse(await readFile(file, 'utf8'));
let product;
try {
  product = productLock(await readJson('package.json'), await readJson('package-lock.json'), { omitDev: values['omit-dev'] });
} catch (error) {
  process.stderr.write(`${SCRIPT}: ${/** @type {Error} */ (error).message}\n`);
  process.exit(1);
}
// As npm writes them: two-space JSON and a final newline.
await writeFile('package.json', `${JSON.stringify(product.manifest, null, 2)}\n`);
await writeFile('package-lock.json', `${JSON.stringify(product.lock, null, 2)}\n`);
const kept = Object.keys(product.lock.packages ?? {}).length - 1;
process.stdout.write(
  `${SCRIPT}: package.json and package-lock.json are the product's: ${kept} packages${values['omit-dev'] ? ', no dev' : ''}\n`,
);
