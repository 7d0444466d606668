import { execFile } from 'node:child_process';
import { join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The real kubectl with this kubeconfig and a cache in `dir`, and nothing else of the environment:
 * a developer's own KUBECONFIG or cluster must not leak in.
 */
export function kubectlIn(dir: string, kubeconfig: string, ...args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}
