// Whether a CycloneDX SBOM describes the production tree completely: every package npm ls lists is
// a component, no component is a package npm ls does not list, the root component is this package
// at its version, and every license a package.json declares is in its component. A pure function
// of the two documents, so that the check is the same wherever the SBOM and the tree come from.
import { declaredLicenses } from './production-tree.mjs';

export const SPEC_VERSIONS = ['1.5', '1.6'];

/**
 * @typedef {{ license?: { id?: string, name?: string }, expression?: string }} LicenseChoice
 * @typedef {{ name: string, group?: string, version?: string, licenses?: LicenseChoice[], components?: Component[] }} Component
 * @typedef {{ bomFormat?: string, specVersion?: string, metadata?: { component?: Component }, components?: Component[] }} Bom
 * @typedef {import('./production-tree.mjs').InstalledPackage} InstalledPackage
 */

/**
 * @param {Bom} bom the SBOM
 * @param {Map<string, InstalledPackage>} installed the production tree's packages, by name@version
 * @param {{ name: string, version: string, license?: unknown }} root this project's package.json
 * @returns {string[]} every problem, each naming the package or field
 */
export function sbomProblems(bom, installed, root) {
  const problems = [];
  if (bom.bomFormat !== 'CycloneDX') problems.push(`bomFormat is ${JSON.stringify(bom.bomFormat)}, not "CycloneDX"`);
  if (!SPEC_VERSIONS.includes(bom.specVersion ?? ''))
    problems.push(`specVersion is ${JSON.stringify(bom.specVersion)}, not one of ${SPEC_VERSIONS.join(', ')}`);

  const main = bom.metadata?.component;
  if (!main) problems.push('metadata.component (the root component) is missing');
  else {
    if (componentName(main) !== root.name || main.version !== root.version)
      problems.push(`metadata.component is ${componentName(main)}@${main.version}, not ${root.name}@${root.version} (package.json)`);
    problems.push(...licenseProblems(`metadata.component ${root.name}`, main, declaredLicenses(root)));
  }

  /** @type {Map<string, Component>} */
  const listed = new Map();
  const visit = (/** @type {Component[]} */ components) => {
    for (const component of components) {
      listed.set(`${componentName(component)}@${component.version}`, component);
      visit(component.components ?? []);
    }
  };
  visit(bom.components ?? []);

  for (const [id, pkg] of installed) {
    const component = listed.get(id);
    if (!component) problems.push(`${id} is in npm ls's production tree but not a component of the SBOM`);
    else problems.push(...licenseProblems(id, component, pkg.declaredLicenses));
  }
  for (const id of listed.keys())
    if (!installed.has(id)) problems.push(`${id} is a component of the SBOM but not in npm ls's production tree`);
  return problems;
}

/** npm's name of a component: its group is the package's scope. */
const componentName = (/** @type {Component} */ component) => (component.group ? `${component.group}/${component.name}` : component.name);

/**
 * Each declared license must be in the component, as an SPDX id, a name or an expression.
 * @param {string} what
 * @param {Component} component
 * @param {string[]} declared
 */
function licenseProblems(what, component, declared) {
  const given = (component.licenses ?? []).flatMap((choice) => [choice.license?.id, choice.license?.name, choice.expression]);
  return declared
    .filter((license) => !given.includes(license))
    .map(
      (license) => `${what} declares the license ${license} in its package.json, the SBOM gives ${JSON.stringify(given.filter(Boolean))}`,
    );
}
