// The SBOM check against this checkout: the production tree from npm ls, the root from package.json.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { listProductionTree, packagesOf } from './production-tree.mjs';
import { ROOT } from './root.mjs';
import { sbomProblems } from './sbom-problems.mjs';

/**
 * @param {import('./sbom-problems.mjs').Bom} bom
 * @returns {Promise<{ problems: string[], components: number }>}
 */
export async function checkSbom(bom) {
  const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
  const { tree, problems: treeProblems } = await listProductionTree(ROOT);
  const installed = packagesOf(tree);
  const problems = [...treeProblems.map((problem) => `npm ls: ${problem}`), ...sbomProblems(bom, installed, root)];
  return { problems, components: installed.size };
}
