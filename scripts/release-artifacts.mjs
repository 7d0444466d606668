#!/usr/bin/env node
// `npm run release:artifacts -- VERSION [--digest sha256:...] [--out DIR]`: renders into one folder
// (default release/VERSION, gitignored) everything a release publishes besides the npm package and
// the image:
//   install-<shape>.yaml   `kubectl kustomize` of each folder under config/kubernetes/overlays, with
//                          the image set to REPOSITORY:VERSION (and @DIGEST when given), REPOSITORY
//                          being the one in the base Component (scripts/lib/image-setting.mjs)
//   monitoring.yaml        `kubectl kustomize config/monitoring`, and the same rules and dashboards
//                          as plain files (prometheus-rules.yaml, the dashboards' JSON)
//   policy.schema.json     the policy file's JSON Schema (dist/, from npm run build)
//   output.schema.json     the schema of every --json output
//   sbom.cdx.json          the CycloneDX SBOM of the production tree (scripts/sbom.mjs)
//   SHA256SUMS             `sha256sum -c SHA256SUMS` checks the folder
// The folder appears only once complete (it is written beside it and renamed). The same checkout and
// arguments give the same bytes.
import { execFile } from 'node:child_process';
import { access, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { parseAllDocuments } from 'yaml';

import { CHECKSUMS_FILE, writeChecksums } from './lib/checksums.mjs';
import { containerImages } from './lib/container-images.mjs';
import { IMAGE_PLACEHOLDER, imageReference, imageSetting } from './lib/image-setting.mjs';
import { kustomize, kustomizeWithImage } from './lib/kustomize.mjs';
import { plainMonitoringFiles } from './lib/monitoring-files.mjs';
import { releaseArgumentProblems } from './lib/release-arguments.mjs';
import { ROOT } from './lib/root.mjs';
import { exitWithProblems, parseScriptArguments } from './lib/script-arguments.mjs';

const SCRIPT = 'release:artifacts';
const OVERLAYS = join(ROOT, 'config/kubernetes/overlays');
const MONITORING = join(ROOT, 'config/monitoring');
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
/** Files copied as they are: release name, source. */
const SCHEMAS = [
  ['policy.schema.json', 'dist/policy.schema.json'],
  ['output.schema.json', 'schema/output.schema.json'],
];

const { values, positionals } = parseScriptArguments(SCRIPT, { digest: { type: 'string' }, out: { type: 'string' } });
const packageVersion = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version;
const [version, ...extra] = positionals;
const problems = releaseArgumentProblems({ version, digest: values.digest, packageVersion });
if (extra.length > 0) problems.push(`unexpected argument ${extra[0]} (one VERSION only)`);
const out = resolve(values.out ?? join(ROOT, 'release', version ?? ''));
if (values.out !== undefined || problems.length === 0) problems.push(...(await outProblems(out)));
for (const [, source] of SCHEMAS)
  if (!(await exists(join(ROOT, source)))) problems.push(`${source} is missing: run npm run build first (npm run release:artifacts does)`);
if (problems.length > 0) exitWithProblems(SCRIPT, problems);

await mkdir(dirname(out), { recursive: true });
const partial = await mkdtemp(join(dirname(out), `.${basename(out)}.partial-`));
try {
  const { repository } = await imageSetting(ROOT);
  const image = imageReference(repository, version, values.digest);
  for (const overlay of await overlays()) {
    const rendered = await kustomizeWithImage(join(OVERLAYS, overlay), {
      name: repository,
      newName: repository,
      newTag: version,
      ...(values.digest ? { digest: values.digest } : {}),
    });
    checkImage(overlay, rendered, repository, image);
    await writeFile(
      join(partial, `install-${overlay}.yaml`),
      `# token-rotator ${version}: config/kubernetes/overlays/${overlay}, image ${image}\n${rendered}`,
    );
  }

  const monitoring = await kustomize(MONITORING);
  await writeFile(join(partial, 'monitoring.yaml'), `# token-rotator ${version}: config/monitoring\n${monitoring}`);
  for (const [name, content] of plainMonitoringFiles(parseAllDocuments(monitoring).map((document) => document.toJS())))
    await writeFile(join(partial, name), content, { flag: 'wx' }); // never over another artefact of the same name

  for (const [name, source] of SCHEMAS) await copyFile(join(ROOT, source), join(partial, name));
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/sbom.mjs'), '--out', join(partial, 'sbom.cdx.json')], { cwd: ROOT });
  await writeChecksums(partial);
  await rename(partial, out);
} catch (error) {
  await rm(partial, { recursive: true, force: true });
  process.stderr.write(`${SCRIPT}: ${error.stderr || error.message}\n`);
  process.exit(1);
}
process.stdout.write(
  `${out}:\n${(await readdir(out)).map((name) => `  ${name}\n`).join('')}check with: (cd ${out} && sha256sum -c ${CHECKSUMS_FILE})\n`,
);

/** Every folder under config/kubernetes/overlays that is a kustomization, by name. */
async function overlays() {
  const found = [];
  for (const entry of await readdir(OVERLAYS, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const present = await Promise.all(KUSTOMIZATION_FILES.map((file) => exists(join(OVERLAYS, entry.name, file))));
    if (present.includes(true)) found.push(entry.name);
  }
  return found.sort();
}

/**
 * The override must have reached the rotator: a rendered overlay whose rotator still runs the base's
 * tag (its image renamed, say) would install another release than the folder says.
 */
function checkImage(overlay, rendered, repository, image) {
  const images = parseAllDocuments(rendered).flatMap((document) => containerImages(document.toJS()));
  const rotators = images.filter(
    ({ container, image: used }) =>
      container === IMAGE_PLACEHOLDER || used.startsWith(`${repository}:`) || used.startsWith(`${repository}@`),
  );
  if (rotators.length === 0) throw new Error(`overlays/${overlay}: no container runs ${repository}`);
  for (const { container, image: used } of rotators)
    if (used !== image) throw new Error(`overlays/${overlay}: container ${container} runs ${used}, not ${image}`);
}

/** The folder must be new or empty: a file left from another render would be published with this one. */
async function outProblems(out) {
  const info = await stat(out).catch(() => undefined);
  if (info === undefined) return [];
  if (!info.isDirectory()) return [`--out ${out} is not a folder`];
  return (await readdir(out)).length > 0 ? [`--out ${out} is not empty: give a new or empty folder`] : [];
}

async function exists(path) {
  return access(path).then(
    () => true,
    () => false,
  );
}
