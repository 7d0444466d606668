import { execFile } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';

import { KubernetesError } from '../errors.js';
import { remoteText } from '../http/remote-text.js';
import { Secret } from '../secret.js';
import type { ExecConfig } from './kubeconfig.js';

/** What an exec plugin gives: a bearer token, or a client certificate and key, until an expiry. */
export interface ExecCredential {
  token?: Secret;
  clientCertificate?: string;
  clientKey?: Secret;
  /** Undefined: no expiry given; it is used until the API server refuses it. */
  expiresAt?: Date;
}

const EXEC_TIMEOUT_MS = 60_000;

/**
 * Runs a kubeconfig exec credential plugin as kubectl does (client.authentication.k8s.io v1 or
 * v1beta1): no shell, the configured env on top of ours, `KUBERNETES_EXEC_INFO` describing the
 * request, and the `ExecCredential` on stdout. Its stdout holds a credential: never quoted.
 */
export async function runExecPlugin(
  config: ExecConfig,
  cluster: { server: string; certificateAuthority?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<ExecCredential> {
  const info = {
    apiVersion: config.apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(config.provideClusterInfo
        ? {
            cluster: {
              server: cluster.server,
              ...(cluster.certificateAuthority
                ? { 'certificate-authority-data': Buffer.from(cluster.certificateAuthority).toString('base64') }
                : {}),
            },
          }
        : {}),
    },
  };
  // A command with a slash is a path, relative to the kubeconfig; a bare name is looked up in PATH.
  const command = config.command.includes('/') && !isAbsolute(config.command) ? resolve(config.baseDir, config.command) : config.command;
  const stdout = await new Promise<string>((done, fail) => {
    execFile(
      command,
      config.args,
      {
        env: { ...env, ...Object.fromEntries(config.env.map((e) => [e.name, e.value])), KUBERNETES_EXEC_INFO: JSON.stringify(info) },
        timeout: EXEC_TIMEOUT_MS,
        maxBuffer: 1024 * 1024,
      },
      (error, out, err) => {
        if (!error) return done(out);
        const code = (error as NodeJS.ErrnoException).code;
        const hint = code === 'ENOENT' && config.installHint ? `; ${config.installHint.trim()}` : '';
        const why =
          code === 'ENOENT'
            ? 'not found'
            : error.killed
              ? `no answer in ${EXEC_TIMEOUT_MS / 1000} s`
              : `failed: ${remoteText(String(err || ''))}`;
        fail(new KubernetesError(`the kubeconfig exec credential plugin ${config.command} ${why}${hint}`));
      },
    );
  });
  let parsed: { apiVersion?: string; kind?: string; status?: Record<string, unknown> };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch {
    throw new KubernetesError(`the exec credential plugin ${config.command} printed no ExecCredential JSON`);
  }
  const status = parsed.status ?? {};
  if (parsed.kind !== 'ExecCredential' || typeof status !== 'object') {
    throw new KubernetesError(`the exec credential plugin ${config.command} printed a ${String(parsed.kind)}, not an ExecCredential`);
  }
  const text = (key: string) => (typeof status[key] === 'string' && status[key] ? (status[key] as string) : undefined);
  const token = text('token');
  const certificate = text('clientCertificateData');
  const key = text('clientKeyData');
  if (!token && !(certificate && key))
    throw new KubernetesError(`the exec credential plugin ${config.command} gave neither a token nor a client certificate`);
  const expiry = text('expirationTimestamp');
  return {
    ...(token ? { token: new Secret(token) } : {}),
    ...(certificate && key ? { clientCertificate: certificate, clientKey: new Secret(key) } : {}),
    ...(expiry && !Number.isNaN(Date.parse(expiry)) ? { expiresAt: new Date(expiry) } : {}),
  };
}
