import { systemClock } from '../../clock.js';
import { openEventRecorder, withKubernetesEvents } from '../../compose/kubernetes-events.js';
import { warnAboutUnsafeSettings } from '../../compose/rotation-deps.js';
import { startDaemon } from '../../daemon/start-daemon.js';
import { ConfigError } from '../../errors.js';
import { createLogger, type Logger } from '../../log/logger.js';
import { createNotifier } from '../../notify/notifier.js';
import { onStopSignals, type StopSignal } from '../../rotation/shutdown.js';
import { type CliIo, EXIT } from '../io.js';
import { listenError } from '../listen-error.js';
import { type GlobalOptions, loadRuntime, reloadRuntime, type Runtime } from '../load-runtime.js';

export const DEFAULT_LISTEN = '127.0.0.1:9464';
/** SIGTERM to exit: Kubernetes waits 30 s by default; we promise 10. */
const STOP_DEADLINE_MS = 8_000;

/** Where a bare port listens: the default's host, so `--listen 9470` never opens the port to the network. */
const DEFAULT_HOST = '127.0.0.1';
/** Where `:PORT` listens, as Prometheus exporters read it: every (IPv4) interface. */
const ANY_HOST = '0.0.0.0';

/**
 * `HOST:PORT`, `[IPv6]:PORT`, `:PORT` (every interface, as exporters' `--web.listen-address=:9100`)
 * or a bare `PORT` (on the default host, loopback).
 */
export function parseListen(text: string): { host: string; port: number } | undefined {
  const trimmed = text.trim();
  const match = /^(?:(?:\[([^\]]+)\]|([^:]*)):)?(\d{1,5})$/.exec(trimmed);
  const port = Number(match?.[3]);
  if (!match || port > 65535) return undefined;
  const hasColon = trimmed.includes(':');
  const host = match[1] ?? (match[2] === undefined || match[2] === '' ? (hasColon ? ANY_HOST : DEFAULT_HOST) : match[2]);
  return { host, port };
}

export async function daemonCommand(options: GlobalOptions & { listen?: string }, io: CliIo): Promise<number> {
  const runtime = await loadRuntime(options, io);
  const listenText = options.listen ?? (runtime.env.ROTATOR_LISTEN || DEFAULT_LISTEN);
  const listen = parseListen(listenText);
  if (!listen)
    throw new ConfigError([
      {
        path: options.listen ? '--listen' : 'env.ROTATOR_LISTEN',
        message: `'${listenText}' is not HOST:PORT, such as 127.0.0.1:9464 or [::]:9464`,
      },
    ]);

  const logger = createLogger({ level: runtime.settings.logLevel });
  warnAboutUnsafeSettings(runtime.settings, runtime.env, logger);
  // One recorder for the process: its series of Events outlive a reload of the policy.
  const events = openEventRecorder(runtime.settings, { env: runtime.env, logger, clock: systemClock });
  const notifyFor = (targets: Runtime['notificationTargets'], policy: Runtime['policy']) =>
    withKubernetesEvents(createNotifier(targets, logger), policy, events);
  let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
  // Before anything is said or started: a signal that comes once "daemon started" is out (or while
  // it starts) is a graceful stop, never Node's default exit by the signal. A supervisor that reads
  // the log and stops the process at once must not find it without its handlers.
  const stopSignal = untilStopSignal(() => void daemon?.reload(), logger);
  try {
    daemon = await startDaemon({
      settings: runtime.settings,
      policy: runtime.policy,
      notify: notifyFor(runtime.notificationTargets, runtime.policy),
      reloadPolicy: async () => {
        const next = await reloadRuntime(runtime);
        return { policy: next.policy, notify: notifyFor(next.notificationTargets, next.policy) };
      },
      listen,
      logger,
      clock: systemClock,
      env: runtime.env,
    });
  } catch (error) {
    const refused = listenError(error, options.listen ? '--listen' : 'env.ROTATOR_LISTEN', listenText, 'choose another address or port');
    if (refused) throw refused;
    logger.fatal({ err: error, listen: listenText }, 'cannot start the daemon');
    return EXIT.failed;
  }
  logger.info(
    { listen: daemon.url, tokens: runtime.policy.tokens.length },
    'daemon started; health on /healthz, readiness on /readyz, metrics on /metrics',
  );

  const signal = await stopSignal;
  logger.info({ signal }, 'stopping: no new checks; finishing the ones in flight (send the signal again to exit at once)');
  // The stop handlers stay until the process ends: npm's copy of a Ctrl-C may come after a quick
  // stop, and with no handler it would end the process by the signal instead of exit 0.
  await daemon.stop(STOP_DEADLINE_MS);
  logger.info('stopped');
  // Unlike `once` (143 or 130), a Deployment's pod stopped gracefully has succeeded.
  return EXIT.ok;
}

/**
 * Reloads on each SIGHUP until the first SIGTERM or SIGINT. The stop handlers are never removed:
 * a second signal during the graceful stop exits at once, as for `once` (see onStopSignals). A
 * SIGHUP during the stop (a config reloader firing as the pod ends) is logged and ignored: with no
 * handler, Node's default would end the process by the signal, in the middle of the stop.
 */
function untilStopSignal(reload: () => void, logger: Logger): Promise<StopSignal> {
  return new Promise((resolve) => {
    process.on('SIGHUP', reload);
    onStopSignals(
      (signal) => {
        process.off('SIGHUP', reload);
        process.on('SIGHUP', () => logger.warn('SIGHUP while stopping: the policy is not reloaded'));
        resolve(signal);
      },
      { logger },
    );
  });
}
