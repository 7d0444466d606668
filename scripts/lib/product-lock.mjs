// The product alone, cut out of the workspace root: its package.json without `workspaces`, and its
// package-lock.json reduced to what the product itself depends on. The image build installs from
// these (scripts/image/product-manifest.mjs), and the tarball tests install the packed product from
// them, because npm's own flags cannot keep the workspace packages out: npm always counts the
// workspaces as production dependencies of the root (npm/cli#9100), `--omit=dev` keeps their
// devDependencies (npm/cli#6670), and `--workspaces=false` has had holes (npm/cli#6690, #6691).
//
// The closure is walked through the lock's `packages` map as Node resolves a package: from the
// folder that needs it, the nearest `node_modules/<name>` up the path. Each kept entry's flags
// (dev, optional, devOptional, peer) are computed again, as npm computes them, for the product's
// graph: a lock's flags describe the whole workspace, and `npm ci` trusts them when it omits.
// A pure function of the two documents.

/**
 * @typedef {{ [key: string]: unknown, version?: string, link?: boolean, resolved?: string,
 *   dependencies?: Record<string, string>, optionalDependencies?: Record<string, string>,
 *   peerDependencies?: Record<string, string>, peerDependenciesMeta?: Record<string, { optional?: boolean }>,
 *   devDependencies?: Record<string, string>, workspaces?: unknown,
 *   dev?: boolean, optional?: boolean, devOptional?: boolean, peer?: boolean }} LockEntry
 * @typedef {{ [key: string]: unknown, lockfileVersion?: number, packages?: Record<string, LockEntry> }} Lock
 * @typedef {{ [key: string]: unknown, name?: string, workspaces?: unknown, devDependencies?: Record<string, string> }} Manifest
 * @typedef {'prod' | 'dev' | 'optional' | 'peer' | 'peerOptional'} EdgeType
 * @typedef {{ name: string, type: EdgeType, to: string | undefined }} Edge
 */

const FLAGS = /** @type {const} */ (['dev', 'optional', 'devOptional', 'peer']);

/**
 * @param {Manifest} manifest the root package.json
 * @param {Lock} lock its package-lock.json (lockfileVersion 3)
 * @param {{ omitDev?: boolean }} [options] omitDev: leave the devDependencies out of both
 * @returns {{ manifest: Manifest, lock: Lock }}
 * @throws {Error} when the lock is not version 3, misses a package the product needs, or the
 *   product's closure reaches a workspace package (a link)
 */
export function productLock(manifest, lock, { omitDev = false } = {}) {
  if (lock.lockfileVersion !== 3 || !lock.packages?.[''])
    throw new Error('package-lock.json: expected lockfileVersion 3 with a packages map');
  const packages = lock.packages;
  const product = withoutFields(manifest, omitDev ? ['workspaces', 'devDependencies'] : ['workspaces']);
  const root = withoutFields(packages[''], omitDev ? ['workspaces', 'devDependencies'] : ['workspaces']);

  const graph = dependencyGraph(packages, edgesOf(product, true));
  const kept = { '': root };
  for (const [path, flags] of dependencyFlags(graph)) {
    if (path === '') continue;
    const entry = /** @type {LockEntry} */ ({ ...packages[path] });
    for (const flag of FLAGS) delete entry[flag];
    // As npm writes them: devOptional only for a package in both the dev and the optional trees.
    if (flags.dev) entry.dev = true;
    if (flags.optional) entry.optional = true;
    if (flags.devOptional && !flags.dev && !flags.optional) entry.devOptional = true;
    if (flags.peer) entry.peer = true;
    kept[path] = entry;
  }
  // The lock's order (npm's, sorted by path), so that the file differs from npm's only by what left.
  const ordered = Object.fromEntries(Object.keys(packages).flatMap((path) => (path in kept ? [[path, kept[path]]] : [])));
  return { manifest: product, lock: { ...lock, packages: ordered } };
}

/**
 * Every package the product reaches, with the edges out of it, from the root (path '').
 * @param {Record<string, LockEntry>} packages
 * @param {Omit<Edge, 'to'>[]} rootEdges
 * @returns {Map<string, Edge[]>}
 */
function dependencyGraph(packages, rootEdges) {
  /** @type {Map<string, Edge[]>} */
  const graph = new Map();
  const pending = [''];
  while (pending.length > 0) {
    const from = /** @type {string} */ (pending.pop());
    const edges = (from === '' ? rootEdges : edgesOf(packages[from], false)).map((edge) => ({
      ...edge,
      to: resolve(packages, from, edge.name),
    }));
    graph.set(from, edges);
    for (const { name, type, to } of edges) {
      if (to === undefined) {
        if (type === 'optional' || type === 'peerOptional') continue; // not installed: another platform's, or not wanted
        throw new Error(`package-lock.json has no ${name} for ${from || 'the root'}, which needs it (${type})`);
      }
      const target = packages[to];
      if (target.link || !to.startsWith('node_modules/'))
        throw new Error(
          `the product's dependencies reach ${to}, a link to the workspace package ${target.resolved ?? to} (from ${from || 'the root'}): ` +
            'the product must not depend on a workspace package',
        );
      if (!graph.has(to) && !pending.includes(to)) pending.push(to);
    }
  }
  return graph;
}

/**
 * The edges out of a lock entry (or the root manifest), one per name: optional beats prod beats
 * peer, as npm reads a package.json; devDependencies count for the root only.
 * @param {LockEntry} entry
 * @param {boolean} isRoot
 * @returns {Omit<Edge, 'to'>[]}
 */
function edgesOf(entry, isRoot) {
  /** @type {Map<string, EdgeType>} */
  const types = new Map();
  for (const name of Object.keys(entry.peerDependencies ?? {}))
    types.set(name, entry.peerDependenciesMeta?.[name]?.optional ? 'peerOptional' : 'peer');
  for (const name of Object.keys(entry.dependencies ?? {})) types.set(name, 'prod');
  for (const name of Object.keys(entry.optionalDependencies ?? {})) types.set(name, 'optional');
  if (isRoot) for (const name of Object.keys(entry.devDependencies ?? {})) if (!types.has(name)) types.set(name, 'dev');
  return [...types].map(([name, type]) => ({ name, type }));
}

/**
 * Node's resolution in the lock: `name` as the package at `from` finds it, in the nearest
 * node_modules up its path. A workspace folder (packages/x) resolves as any other folder.
 * @param {Record<string, LockEntry>} packages
 * @param {string} from
 * @param {string} name
 */
function resolve(packages, from, name) {
  for (let folder = from; ;) {
    const candidate = folder === '' ? `node_modules/${name}` : `${folder}/node_modules/${name}`;
    if (Object.hasOwn(packages, candidate)) return candidate;
    if (folder === '') return undefined;
    const parent = folder.lastIndexOf('/node_modules/');
    folder = parent === -1 ? '' : folder.slice(0, parent);
  }
}

/**
 * npm's dependency flags (its calc-dep-flags), each the complement of a reachability from the root:
 * not `dev` if reached without a devDependency edge, not `optional` if reached through no optional
 * edge, not `devOptional` if reached through neither, not `peer` if reached through no peer edge.
 * @param {Map<string, Edge[]>} graph
 * @returns {Map<string, Record<(typeof FLAGS)[number], boolean>>}
 */
function dependencyFlags(graph) {
  /** @param {(type: EdgeType) => boolean} follows */
  const reachedThrough = (follows) => {
    const reached = new Set(['']);
    const pending = [''];
    while (pending.length > 0)
      for (const { type, to } of graph.get(/** @type {string} */ (pending.pop())) ?? []) {
        if (to === undefined || !follows(type) || reached.has(to)) continue;
        reached.add(to);
        pending.push(to);
      }
    return reached;
  };
  const notDev = reachedThrough((type) => type !== 'dev');
  const notOptional = reachedThrough((type) => type !== 'optional' && type !== 'peerOptional');
  const production = reachedThrough((type) => type === 'prod' || type === 'peer');
  const notPeer = reachedThrough((type) => type !== 'peer' && type !== 'peerOptional');
  return new Map(
    [...graph.keys()].map((path) => [
      path,
      { dev: !notDev.has(path), optional: !notOptional.has(path), devOptional: !production.has(path), peer: !notPeer.has(path) },
    ]),
  );
}

/**
 * @template {Record<string, unknown>} T
 * @param {T} object
 * @param {string[]} fields
 * @returns {T}
 */
function withoutFields(object, fields) {
  return /** @type {T} */ (Object.fromEntries(Object.entries(object).filter(([key]) => !fields.includes(key))));
}
