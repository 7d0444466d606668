// @ts-check
/**
 * The import rules `npm run lint:deps` checks (docs/design.md, § Layers).
 *
 * LAYERS lists the folders of src/, top to bottom: a folder may import only the folders below it.
 * The base (the files at the root of src/, and src/scrub/) imports no folder. To add a folder to
 * src/, put it in LAYERS where it belongs: a folder in no layer fails `folder-in-a-layer` if it
 * imports anything and `into-a-layer` if anything imports it.
 *
 * The workspace packages (packages/*) are tools around the product, never part of it: the product
 * imports none of them, the emulator imports neither the product nor the demo, and the Kubernetes
 * double imports none of the others.
 */
const LAYERS = [
  'cli',
  'daemon',
  'compose',
  'rbac',
  'config',
  'notify',
  'reload',
  'rotation',
  'verify',
  'sinks',
  'state',
  'policy',
  'api',
  'auth',
  'kubernetes',
  'http',
  'fs',
  'log',
  'common',
];

const anyOf = (/** @type {string[]} */ names) => `(?:${names.join('|')})`;

/** A file in a folder of src/ that is in no layer (the base's scrub/ is in its place). */
const outsideTheLayers = { path: '^src/[^/]+/', pathNot: `^src/${anyOf([...LAYERS, 'scrub'])}/` };

const layerRules = LAYERS.slice(1).map((layer, index) => ({
  name: `layer-${layer}`,
  comment: `src/${layer} may import only the layers below it (docs/design.md, § Layers)`,
  severity: /** @type {const} */ ('error'),
  from: { path: `^src/${layer}/` },
  to: { path: `^src/${anyOf(LAYERS.slice(0, index + 1))}/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle, even one of type-only imports, means a type lives in the wrong file: move it to the code that holds it',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'base-is-a-leaf',
      comment: 'The files at the root of src/ and src/scrub/ are the base: they import no layer',
      severity: 'error',
      from: { path: '^src/(?:[^/]+$|scrub/)' },
      to: { path: `^src/${anyOf(LAYERS)}/` },
    },
    {
      name: 'folder-in-a-layer',
      comment: 'Every folder of src/ has its place in LAYERS (.dependency-cruiser.cjs)',
      severity: 'error',
      from: outsideTheLayers,
      to: {},
    },
    {
      name: 'into-a-layer',
      comment: 'Every folder of src/ has its place in LAYERS (.dependency-cruiser.cjs), even one that imports nothing',
      severity: 'error',
      from: {},
      to: outsideTheLayers,
    },
    {
      name: 'product-not-to-packages',
      comment: 'The product never imports the workspace packages (emulator, Kubernetes double, demo)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^packages/' },
    },
    {
      name: 'emulator-not-to-product',
      comment: 'The emulator stands alone: it imports neither the product nor the demo',
      severity: 'error',
      from: { path: '^packages/emulator/' },
      to: { path: '^(?:src|dist|packages/demo)/' },
    },
    {
      name: 'double-independent',
      comment: 'The Kubernetes double imports neither the product, the emulator nor the demo',
      severity: 'error',
      from: { path: '^packages/kubernetes-double/' },
      to: { path: '^(?:src|dist|packages/(?:emulator|demo))/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves to a file or an installed package',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Every import that ran upward was `import type`: the check must see type-only imports.
    tsPreCompilationDeps: true,
    // A build output is a leaf, not excluded: an import of dist/ stays an edge the rules above see
    // (an emulator importing the built product), while what dist/ itself imports is not cruised.
    doNotFollow: { path: ['node_modules', '(?:^|/)dist/'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // `source` first: a workspace package is read from its sources, built or not.
      conditionNames: ['source', 'import', 'node', 'default'],
    },
  },
};
