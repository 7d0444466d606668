import { resolve } from 'node:path';

import type { KubernetesDouble } from 'token-rotator-kubernetes-double';
import { isDns1123Label } from 'token-rotator-kubernetes-double/name-rules';

import { envFileText } from '../env-file-text.js';
import { loadSeedFile } from '../seed.js';
import { startEmulator } from '../start-emulator.js';
import { EmulatorUsageError } from '../usage-error.js';
import { type EmulatorIo, EXIT } from './io.js';
import { listenError } from './listen-error.js';
import { isLoopbackHost } from './loopback.js';
import { tokenTable } from './token-table.js';
import { writePrivateFile } from './write-private-file.js';

export interface EmulatorCommandOptions {
  host: string;
  port: number;
  seed?: string;
  envOut?: string;
  latency?: number;
  rateLimit?: number;
  /** Also serve the Kubernetes API double, with a kubeconfig for it written to this file. */
  kubernetes?: string;
  namespaces?: string;
}

function processStopped(): Promise<string> {
  return new Promise((done) => {
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
  });
}

/**
 * Serves the token service double until SIGINT or SIGTERM. Its OAuth client secret is never printed:
 * `--env-out` writes the settings a rotator needs to a 0600 env file.
 */
export async function emulatorCommand(options: EmulatorCommandOptions, io: EmulatorIo, untilStopped = processStopped): Promise<number> {
  const host = options.host.replace(/^\[(.*)\]$/, '$1');
  if (!isLoopbackHost(host)) {
    throw new EmulatorUsageError([
      {
        path: '--host',
        message: 'the emulator has an unauthenticated control API; it only listens on loopback (127.0.0.1, ::1, localhost)',
      },
    ]);
  }
  const namespaces = (options.namespaces ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  // The double's own rule (apimachinery's), not the product's: a namespace the double would refuse.
  const badNamespace = namespaces.find((n) => isDns1123Label(n).length > 0);
  if (options.kubernetes !== undefined && badNamespace !== undefined) {
    throw new EmulatorUsageError([
      { path: '--namespaces', message: `'${badNamespace}' is not a namespace name: lowercase letters, digits and "-"` },
    ]);
  }
  const seed = options.seed ? await loadSeedFile(resolve(io.cwd, options.seed)) : undefined;
  // Listening for the stop before the env file or a line says it serves: whoever waits for either
  // and stops it at once gets a clean stop, not Node's default exit by the signal.
  const stopped = untilStopped();
  let emulator;
  try {
    emulator = await startEmulator({
      host,
      port: options.port,
      seed: seed as Record<string, unknown> | undefined,
      latencyMs: options.latency,
      rateLimitPerMinute: options.rateLimit,
    });
  } catch (error) {
    throw listenError(error, '--port', `${options.host}:${options.port}`, 'choose another port, or 0 for any free one') ?? error;
  }
  let kubernetes: KubernetesDouble | undefined;
  try {
    const env: Record<string, string> = { ...emulator.rotatorEnv() };
    let kubernetesNote = '';
    if (options.kubernetes !== undefined) {
      const { startKubernetesDouble } = await import('token-rotator-kubernetes-double');
      kubernetes = await startKubernetesDouble({ host, namespaces });
      const file = resolve(io.cwd, options.kubernetes);
      // It holds the double's bearer: 0600, as any kubeconfig with credentials should be.
      await writePrivateFile(file, kubernetes.kubeconfig({ namespace: namespaces[0] ?? 'default' }));
      env.KUBECONFIG = file;
      kubernetesNote =
        `Kubernetes API double on ${kubernetes.httpsUrl} (namespaces: ${['default', ...namespaces].join(', ')})\n` +
        `  KUBECONFIG=${file}   (for token-rotator and kubectl alike)\n\n`;
    }
    let secretNote = 'client secret: not shown; start with --env-out FILE to have it written to a 0600 env file';
    if (options.envOut) {
      const file = resolve(io.cwd, options.envOut);
      await writePrivateFile(file, envFileText(env));
      secretNote = `settings and client secret written to ${options.envOut} (use: token-rotator once --dotenv ${options.envOut})`;
    }
    io.stdout.write(
      `token service emulator on ${emulator.apiUrl}\n` +
        `  ROTATOR_API_URL=${env.ROTATOR_API_URL}\n` +
        `  ROTATOR_OAUTH_ISSUER=${env.ROTATOR_OAUTH_ISSUER}\n` +
        `  ROTATOR_OAUTH_CLIENT_ID=${env.ROTATOR_OAUTH_CLIENT_ID}\n` +
        `  ${secretNote}\n` +
        `  control API: ${emulator.apiUrl}/_emulator/{tokens,requests,faults,whoami}\n\n` +
        kubernetesNote,
    );
    const tokens = emulator.store.all();
    if (tokens.length) {
      io.stdout.write(tokenTable(tokens));
    }
    io.stdout.write('\nCtrl-C to stop.\n');
    await stopped;
  } finally {
    await Promise.all([emulator.close(), kubernetes?.close()]);
  }
  return EXIT.ok;
}
