import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

import { modelProblems } from '../helpers/kubernetes-models.js';
import { kubectlKustomize, overlayNames, ROOT, runScript } from '../helpers/scripts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * npm run release:artifacts, rendered into temporary folders as a release would be (the npm script
 * builds first; `npm test` has built), then every file checked against its source.
 */

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const VERSION = pkg.version;
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const OVERLAYS_DIR = join(ROOT, 'config/kubernetes/overlays');
const overlays = await overlayNames();
/** The one image setting: the base Component's `images:` entry for the workloads' `image: token-rotator`. */
const baseImage = (
  parse(await readFile(join(ROOT, 'config/kubernetes/base/kustomization.yaml'), 'utf8')) as {
    images: Array<{ name: string; newName: string; newTag: string }>;
  }
).images.find((i) => i.name === 'token-rotator')!;
const REPOSITORY = baseImage.newName;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { groups?: unknown[] };
  data?: Record<string, string>;
}
const objectsOf = (text: string) =>
  parseAllDocuments(text).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as K8sObject;
  });

/** Every container of an object, wherever its kind keeps its pod spec. */
function containers(value: unknown): Array<{ name: string; image: string }> {
  if (Array.isArray(value)) return value.flatMap(containers);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => [
    ...(['containers', 'initContainers'].includes(key) ? (child as Array<{ name: string; image: string }>) : []),
    ...containers(child),
  ]);
}

let dir: string;
let pinned: string; // with --digest
let tagged: string; // without
const read = (folder: string, name: string) => readFile(join(folder, name), 'utf8');
beforeAll(async () => {
  dir = await makeTempDir('token-rotator-release-');
  pinned = join(dir, 'pinned');
  tagged = join(dir, 'tagged');
  for (const [out, extra] of [
    [pinned, ['--digest', DIGEST]],
    [tagged, []],
  ] as const) {
    const result = await runScript('release-artifacts.mjs', [VERSION, ...extra, '--out', out]);
    expect(result.code, result.stderr).toBe(0);
  }
}, 480_000);

describe('npm run release:artifacts VERSION --digest sha256:...', () => {
  it('renders one install manifest per overlay, the monitoring bundle, both schemas, the SBOM and SHA256SUMS, in one folder', async () => {
    expect(overlays.length).toBeGreaterThanOrEqual(3);
    expect((await readdir(pinned)).sort()).toEqual(
      [
        ...overlays.map((o) => `install-${o}.yaml`),
        'monitoring.yaml',
        'prometheus-rules.yaml',
        'grafana-dashboard.json',
        'policy.schema.json',
        'output.schema.json',
        'sbom.cdx.json',
        'SHA256SUMS',
      ].sort(),
    );
    expect((await readdir(dir)).sort(), 'no partial folder left beside it').toEqual(['pinned', 'tagged']);
  });

  it('writes SHA256SUMS over every other file, which sha256sum -c accepts', async () => {
    const files = (await readdir(pinned)).filter((name) => name !== 'SHA256SUMS').sort();
    const expected = await Promise.all(
      files.map(
        async (name) =>
          `${createHash('sha256')
            .update(await readFile(join(pinned, name)))
            .digest('hex')}  ${name}`,
      ),
    );
    expect((await read(pinned, 'SHA256SUMS')).trimEnd().split('\n')).toEqual(expected);
    const { stdout } = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: pinned });
    expect(stdout.trim().split('\n')).toEqual(files.map((name) => `${name}: OK`));
  });

  it('holds only objects valid for their kubernetes-models model, with no field their schema does not know', async () => {
    const yamlFiles = (await readdir(pinned)).filter((name) => name.endsWith('.yaml') && name !== 'prometheus-rules.yaml');
    const problems: string[] = [];
    let count = 0;
    for (const name of yamlFiles)
      for (const object of objectsOf(await read(pinned, name))) {
        count++;
        problems.push(...(await modelProblems(object)).map((p) => `${name}: ${p}`));
      }
    // The plain rules file is a PrometheusRule's spec: checked as one.
    const rules = parse(await read(pinned, 'prometheus-rules.yaml')) as object;
    const asRule = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'prometheus-rules.yaml' },
      spec: rules,
    };
    problems.push(...(await modelProblems(asRule)));
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(overlays.length * 5);
  });

  it.each(overlays)(
    "install-%s.yaml is kubectl kustomize of its overlay, with the rotator's image alone set to REPOSITORY:VERSION@DIGEST",
    async (overlay) => {
      const released = objectsOf(await read(pinned, `install-${overlay}.yaml`));
      const local = objectsOf(await kubectlKustomize(join(OVERLAYS_DIR, overlay)));
      const image = `${REPOSITORY}:${VERSION}@${DIGEST}`;
      const rotators = released.flatMap(containers).filter((c) => c.image.startsWith(`${REPOSITORY}:`));
      expect(rotators.length).toBeGreaterThan(0);
      for (const rotator of rotators) expect(rotator).toEqual(expect.objectContaining({ name: 'token-rotator', image }));
      for (const container of local.flatMap(containers))
        if (container.image === `${REPOSITORY}:${baseImage.newTag}`) container.image = image;
      expect(released).toEqual(local);
      expect(await read(pinned, `install-${overlay}.yaml`)).toMatch(new RegExp(`^# token-rotator ${VERSION.replaceAll('.', '\\.')}: `));
    },
  );

  it('ships the monitoring bundle as kubectl kustomize renders it, and its rules and dashboards as plain files', async () => {
    const monitoring = objectsOf(await kubectlKustomize(join(ROOT, 'config/monitoring')));
    expect(objectsOf(await read(pinned, 'monitoring.yaml'))).toEqual(monitoring);
    const groups = monitoring.filter((o) => o.kind === 'PrometheusRule').flatMap((o) => o.spec!.groups!);
    expect(groups.length).toBeGreaterThan(0);
    expect(parse(await read(pinned, 'prometheus-rules.yaml'))).toEqual({ groups });
    expect(await read(pinned, 'grafana-dashboard.json')).toBe(
      await readFile(join(ROOT, 'config/monitoring/grafana-dashboard.json'), 'utf8'),
    );
  });

  it('ships the built policy schema and the output schema as they are', async () => {
    expect(await read(pinned, 'policy.schema.json')).toBe(await readFile(join(ROOT, 'dist/policy.schema.json'), 'utf8'));
    expect(await read(pinned, 'output.schema.json')).toBe(await readFile(join(ROOT, 'schema/output.schema.json'), 'utf8'));
  });

  it('ships an SBOM of this version that sbom:check finds complete', async () => {
    const bom = JSON.parse(await read(pinned, 'sbom.cdx.json')) as { metadata: { component: { name: string; version: string } } };
    expect(bom.metadata.component).toMatchObject({ name: 'token-rotator', version: VERSION });
    const result = await runScript('check-sbom.mjs', [join(pinned, 'sbom.cdx.json')]);
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('npm run release:artifacts VERSION, without a digest', () => {
  it('sets the image to REPOSITORY:VERSION, and renders every other file to the same bytes (reproducible)', async () => {
    for (const overlay of overlays) {
      const images = objectsOf(await read(tagged, `install-${overlay}.yaml`))
        .flatMap(containers)
        .filter((c) => c.image.startsWith(REPOSITORY));
      expect(images.map((c) => c.image)).toEqual(images.map(() => `${REPOSITORY}:${VERSION}`));
    }
    const sums = async (folder: string) =>
      (await read(folder, 'SHA256SUMS')).split('\n').filter((line) => line && !/ {2}install-/.test(line));
    expect(await sums(tagged)).toEqual(await sums(pinned));
  });
});

describe('npm run release:artifacts with bad arguments', () => {
  it('names every problem, exits 2, and writes nothing', async () => {
    const full = join(dir, 'full');
    await mkdir(full);
    await writeFile(join(full, 'old.yaml'), '');
    const result = await runScript('release-artifacts.mjs', [`v${VERSION}`, 'extra', '--digest', 'sha256:abc', '--out', full]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      `release:artifacts: VERSION "v${VERSION}" is not a semantic version such as 1.2.3 (give it without the v)`,
      'release:artifacts: --digest "sha256:abc" is not sha256: followed by 64 lowercase hex digits (the image\'s manifest digest)',
      'release:artifacts: unexpected argument extra (one VERSION only)',
      `release:artifacts: --out ${full} is not empty: give a new or empty folder`,
    ]);
    expect(await readdir(full)).toEqual(['old.yaml']);
  });

  it.each([
    [['1.2'], 'VERSION "1.2" is not a semantic version such as 1.2.3'],
    [['99.0.0'], `VERSION 99.0.0 is not this checkout's version ${VERSION} (package.json "version")`],
    [[], 'VERSION is required'],
    [[VERSION, '--registry', 'x'], "Unknown option '--registry'"],
  ])('refuses %j: %s', async (args, message) => {
    const out = join(dir, `refused-${args.join('-') || 'none'}`);
    const result = await runScript('release-artifacts.mjs', [...args, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect((await readdir(dir)).filter((name) => name.startsWith('refused') || name.includes('partial'))).toEqual([]);
  });
});
