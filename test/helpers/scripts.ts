import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';

import type { CliResult } from './cli.js';

export const ROOT = resolve(import.meta.dirname, '../..');

/** Runs one of scripts/*.mjs as `npm run` does, from the project folder (or `cwd`), by this Node. */
export function runScript(script: string, args: string[], cwd = ROOT): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [resolve(ROOT, 'scripts', script), ...args],
      { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** `npm ls --all --json` of this checkout's root package (no workspace package) with the given --omit types. */
export function npmLs(omit: string[]): Promise<NpmLsNode> {
  return new Promise((done, fail) => {
    execFile(
      'npm',
      ['ls', '--all', '--json', '--workspaces=false', ...omit.map((type) => `--omit=${type}`)],
      { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) fail(new Error(`npm ls failed: ${stderr}`, { cause: error }));
        else done(JSON.parse(stdout) as NpmLsNode);
      },
    );
  });
}

export interface NpmLsNode {
  version?: string;
  dependencies?: Record<string, NpmLsNode>;
}

/** Every name@version in an npm ls tree below its root. */
export function packageIds(tree: NpmLsNode): Set<string> {
  const ids = new Set<string>();
  const visit = (node: NpmLsNode) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      ids.add(`${name}@${child.version}`);
      visit(child);
    }
  };
  visit(tree);
  return ids;
}

/** `kubectl kustomize TARGET`: a folder, or a remote base URL. */
export function kubectlKustomize(target: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile('kubectl', ['kustomize', target], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`kubectl kustomize ${target} failed: ${stderr}`, { cause: error }));
      else done(stdout);
    });
  });
}

/** The folders under config/kubernetes/overlays: each shape the release renders. */
export async function overlayNames(): Promise<string[]> {
  const entries = await readdir(resolve(ROOT, 'config/kubernetes/overlays'), { withFileTypes: true });
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}
