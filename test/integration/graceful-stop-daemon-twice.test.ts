import type { ChildProcess } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { SAME_STOP_WITHIN_MS } from '../../src/rotation/shutdown.js';
import { runCli, seedSink, startCli, writePolicy } from '../helpers/cli.js';
import { useCliFixture } from '../helpers/cli-fixture.js';

const DAY = 24 * 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `condition`; fails at once, with the daemon's stderr, if the daemon ended first. */
async function until(condition: () => boolean, what: string, daemon?: { child: ChildProcess; stderr: () => string }): Promise<void> {
  for (let waited = 0; !condition(); waited += 50) {
    const ended = daemon && (daemon.child.exitCode !== null || daemon.child.signalCode !== null);
    if (ended) {
      const how = daemon.child.signalCode ? `by ${daemon.child.signalCode}` : `with ${daemon.child.exitCode}`;
      throw new Error(`the daemon ended ${how} before ${what}:\n${daemon.stderr()}`);
    }
    if (waited > 40_000) throw new Error(`timed out waiting for ${what}:\n${daemon?.stderr() ?? ''}`);
    await sleep(50);
  }
}

/**
 * An operator who does not want to wait for the graceful stop (Ctrl-C twice, or a second SIGTERM
 * from a supervisor) gets the process back at once, as from `once`: the journal lets the next
 * start finish what this one had started.
 */
describe('daemon: a second stop signal exits at once', () => {
  const fx = useCliFixture({
    env: () => ({ ROTATOR_LISTEN: '127.0.0.1:0' }),
  });
  const args = () => ['--config', 'rotation.yaml', '--dotenv', fx.envFile];

  /** One token, not due, delivered to its file sink. */
  async function oneToken(): Promise<void> {
    const token = fx.emulator.store.add({ name: 'ingest', expiresAt: new Date(Date.now() + 60 * DAY) });
    await seedSink(fx.dir, 'secrets/ingest.token', token.secret);
    await writePolicy(fx.dir, {
      version: 1,
      tokens: [{ name: 'ingest', id: token.id, sinks: [{ type: 'file', path: 'secrets/ingest.token' }] }],
    });
  }

  /** The daemon, with its stderr so far and a wait that fails at once if it ends first. */
  function startDaemon() {
    const daemon = startCli(['daemon', ...args()], { cwd: fx.dir });
    let stderr = '';
    daemon.child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const waitFor = (condition: () => boolean, what: string) => until(condition, what, { child: daemon.child, stderr: () => stderr });
    return { ...daemon, stderr: () => stderr, waitFor };
  }

  /** The daemon, its first check hung for `hangMs`, sent `signal` and into its graceful stop. */
  async function stoppingOnAHungCheck(hangMs: number, signal: NodeJS.Signals) {
    fx.emulator.requests.length = 0;
    fx.emulator.faults.add({ op: 'retrieve', times: 1000, action: { kind: 'hang', ms: hangMs } });
    const daemon = startDaemon();
    await daemon.waitFor(() => fx.emulator.requests.length > 0, 'the check to reach the service');
    daemon.child.kill(signal);
    await daemon.waitFor(() => /"msg":"stopping: /.test(daemon.stderr()), 'the graceful stop to begin');
    return daemon;
  }

  it.each([
    ['SIGTERM', 'SIGTERM', 143],
    ['SIGINT', 'SIGINT', 130],
    ['SIGTERM', 'SIGINT', 130],
  ] as const)(
    '%s, then %s while the stop waits on a hung service: exit %i at once, with the warning',
    async (first, second, code) => {
      await oneToken();
      const once = await runCli(['once', ...args()], { cwd: fx.dir });
      fx.results.push(once);
      expect(once.code, once.stderr).toBe(0);

      // The check hangs for a minute: the graceful stop would wait for its 8 s deadline.
      const daemon = await stoppingOnAHungCheck(60_000, first);
      // Sooner would be the same stop (Ctrl-C under npm arrives twice): see SAME_STOP_WITHIN_MS.
      await sleep(SAME_STOP_WITHIN_MS + 200);
      daemon.child.kill(second);
      const stopped = await daemon.done;
      fx.results.push(stopped);

      expect({ code: stopped.code, signal: stopped.signal }, stopped.stderr).toEqual({ code, signal: null });
      expect(stopped.stderr).toMatch(/"msg":"second stop signal: exiting now/);
      // Not the graceful stop run to its deadline, which ends with "stopped" and exit 0: told by
      // what the daemon says and its exit code, not by a wall-clock window a loaded machine can miss.
      expect(stopped.stderr).not.toMatch(/"msg":"stopped"/);
    },
    60_000,
  );

  it('two SIGINTs at once, as Ctrl-C under npm delivers them, are one graceful stop', async () => {
    await oneToken();
    const daemon = startDaemon();
    await daemon.waitFor(() => /"msg":"daemon started/.test(daemon.stderr()), 'the daemon to start');
    daemon.child.kill('SIGINT');
    // npm's forwarded copy comes a moment after the terminal's, once the first was handled (two
    // sent back to back would merge into one pending signal and test nothing).
    await daemon.waitFor(() => /"msg":"stopping: /.test(daemon.stderr()), 'the graceful stop to begin');
    daemon.child.kill('SIGINT');
    const stopped = await daemon.done;
    fx.results.push(stopped);
    expect({ code: stopped.code, signal: stopped.signal }, stopped.stderr).toEqual({ code: 0, signal: null });
    expect(stopped.stderr).toMatch(/"msg":"stopped"/);
    expect(stopped.stderr).not.toMatch(/second stop signal/);
  }, 60_000);

  it('a SIGHUP during the graceful stop (a config reloader firing as the pod ends) does not end it', async () => {
    await oneToken();
    // The check hangs for 2 s: the stop waits for it, and the SIGHUP comes meanwhile.
    const daemon = await stoppingOnAHungCheck(2_000, 'SIGTERM');
    daemon.child.kill('SIGHUP');
    const stopped = await daemon.done;
    fx.results.push(stopped);
    expect({ code: stopped.code, signal: stopped.signal }, stopped.stderr).toEqual({ code: 0, signal: null });
    expect(stopped.stderr).toMatch(/"msg":"SIGHUP while stopping: the policy is not reloaded"/);
    expect(stopped.stderr).toMatch(/"msg":"stopped"/);
  }, 60_000);
});
