import { EventEmitter } from 'node:events';

import { describe, expect, it, vi } from 'vitest';

import {
  createShutdown,
  exitCodeForStop,
  onStopSignals,
  RotationStopped,
  SAME_STOP_WITHIN_MS,
  type SignalSource,
  stopOnSignals,
  type StopSignal,
  type Timers,
  unref,
} from '../../src/rotation/shutdown.js';
import { silentLogger } from '../fakes/fake-deps.js';
import { manualTimers } from '../fakes/manual-timers.js';

/** A process's signals, sent by the test; counts the handlers still listening. */
function signalSource() {
  const emitter = new EventEmitter();
  const source: SignalSource = {
    on: (event, listener) => emitter.on(event, listener),
    off: (event, listener) => emitter.off(event, listener),
  };
  return {
    source,
    send: (signal: StopSignal) => emitter.emit(signal, signal),
    listening: () => emitter.listenerCount('SIGINT') + emitter.listenerCount('SIGTERM'),
  };
}

describe('a stop asked of a run: first no new work, then, at the deadline, nothing waits any more', () => {
  it('before a stop nothing is aborted and no reason is known', () => {
    const shutdown = createShutdown(manualTimers().timers);
    expect(shutdown.stopping.aborted).toBe(false);
    expect(shutdown.abort.aborted).toBe(false);
    expect(shutdown.reason).toBeUndefined();
  });

  it('a stop aborts `stopping` at once with an AbortError, and `abort` only when its deadline fires', () => {
    const { timers, armed } = manualTimers();
    const shutdown = createShutdown(timers);
    shutdown.stop('SIGTERM', 1234);
    expect(shutdown.reason).toBe('SIGTERM');
    expect(shutdown.stopping.aborted).toBe(true);
    expect((shutdown.stopping.reason as Error).name, 'clients and sinks recognise an abort by its name').toBe('AbortError');
    expect(shutdown.abort.aborted).toBe(false);
    expect(armed.map((t) => t.ms)).toEqual([1234]);
    expect(armed[0]!.unrefd, 'the deadline never keeps the process alive').toBe(true);
    armed[0]!.callback();
    expect(shutdown.abort.aborted).toBe(true);
    expect((shutdown.abort.reason as Error).name).toBe('AbortError');
  });

  it('a second stop changes nothing: the first reason and deadline stand', () => {
    const { timers, armed } = manualTimers();
    const shutdown = createShutdown(timers);
    shutdown.stop('SIGINT', 100);
    shutdown.stop('SIGTERM', 5);
    expect(shutdown.reason).toBe('SIGINT');
    expect(armed).toHaveLength(1);
  });

  it('disposing clears the deadline, once; disposing a run never stopped clears nothing', () => {
    const { timers, armed } = manualTimers();
    const cleared: unknown[] = [];
    const counting: Timers = {
      setTimeout: timers.setTimeout,
      clearTimeout: (timer: never) => {
        cleared.push(timer);
        timers.clearTimeout(timer);
      },
    };
    const idle = createShutdown(counting);
    idle.dispose();
    expect(cleared).toEqual([]);

    const shutdown = createShutdown(counting);
    shutdown.stop('SIGTERM', 100);
    shutdown.dispose();
    shutdown.dispose();
    expect(cleared).toEqual([armed[0]]);
    expect(armed[0]!.cleared).toBe(true);
  });

  it('uses the real timers when given none: the deadline aborts after its delay', async () => {
    const shutdown = createShutdown();
    shutdown.stop('SIGTERM', 0);
    await new Promise((resolve) => shutdown.abort.addEventListener('abort', resolve));
    expect(shutdown.abort.aborted).toBe(true);
    shutdown.dispose();
  });
});

describe('the exit status of a stopped run, as a shell reports a process ended by the signal', () => {
  it('SIGINT 130, SIGTERM 143; a stop asked otherwise (the daemon’s stop) or none has no such status', () => {
    expect(exitCodeForStop('SIGINT')).toBe(130);
    expect(exitCodeForStop('SIGTERM')).toBe(143);
    expect(exitCodeForStop('stop')).toBeUndefined();
    expect(exitCodeForStop(undefined)).toBeUndefined();
  });
});

describe('the two-signal convention: the first stops gracefully, a second exits at once', () => {
  it('listens to SIGINT and SIGTERM, hands the first to the graceful stop, and exits 128 + the number of a later one', () => {
    const signals = signalSource();
    const first: StopSignal[] = [];
    const exits: number[] = [];
    let now = 0;
    onStopSignals((signal) => first.push(signal), {
      logger: silentLogger(),
      signals: signals.source,
      exit: (c) => exits.push(c),
      now: () => now,
    });
    expect(signals.listening()).toBe(2);
    signals.send('SIGTERM');
    expect(first).toEqual(['SIGTERM']);
    expect(exits).toEqual([]);
    now += SAME_STOP_WITHIN_MS;
    signals.send('SIGINT');
    expect(exits).toEqual([130]);
    signals.send('SIGTERM');
    expect(exits).toEqual([130, 143]);
    expect(first).toEqual(['SIGTERM']);
  });

  it('a second signal within moments of the first (Ctrl-C under npm) is the same stop', () => {
    const signals = signalSource();
    const first: StopSignal[] = [];
    const exits: number[] = [];
    let now = 1000;
    onStopSignals((signal) => first.push(signal), {
      logger: silentLogger(),
      signals: signals.source,
      exit: (c) => exits.push(c),
      now: () => now,
    });
    signals.send('SIGINT');
    now += SAME_STOP_WITHIN_MS - 1;
    signals.send('SIGINT');
    expect(exits).toEqual([]);
    expect(first).toEqual(['SIGINT']);
  });

  it('the function it returns removes its handlers', () => {
    const signals = signalSource();
    const first: StopSignal[] = [];
    const remove = onStopSignals((signal) => first.push(signal), {
      logger: silentLogger(),
      signals: signals.source,
      exit: () => undefined,
    });
    remove();
    expect(signals.listening()).toBe(0);
    signals.send('SIGTERM');
    expect(first).toEqual([]);
  });

  it('stopOnSignals stops the shutdown with the signal as its reason and the given deadline', () => {
    const signals = signalSource();
    const { timers, armed } = manualTimers();
    const shutdown = createShutdown(timers);
    const remove = stopOnSignals(shutdown, { logger: silentLogger(), signals: signals.source, exit: () => undefined, deadlineMs: 777 });
    signals.send('SIGINT');
    expect(shutdown.reason).toBe('SIGINT');
    expect(shutdown.stopping.aborted).toBe(true);
    expect(armed.map((t) => t.ms)).toEqual([777]);
    remove();
    expect(signals.listening()).toBe(0);
  });

  it('by default tells two signals moments apart by the monotonic clock: back to back, they are one stop', () => {
    const signals = signalSource();
    const exits: number[] = [];
    const first: StopSignal[] = [];
    onStopSignals((signal) => first.push(signal), { logger: silentLogger(), signals: signals.source, exit: (c) => exits.push(c) });
    signals.send('SIGTERM');
    signals.send('SIGTERM'); // microseconds later
    expect(exits).toEqual([]);
    expect(first, 'one graceful stop, not two').toEqual(['SIGTERM']);
  });

  it('by default a second signal exits the process itself', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      const signals = signalSource();
      let now = 0;
      onStopSignals(() => undefined, { logger: silentLogger(), signals: signals.source, now: () => (now += SAME_STOP_WITHIN_MS) });
      signals.send('SIGTERM');
      signals.send('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
    } finally {
      exit.mockRestore();
    }
  });

  it('by default listens on the process, and a signal then stops the run', () => {
    const before = process.listenerCount('SIGTERM');
    const shutdown = createShutdown(manualTimers().timers);
    const remove = stopOnSignals(shutdown, { logger: silentLogger(), exit: () => undefined, deadlineMs: 10 });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    process.emit('SIGTERM', 'SIGTERM');
    expect(shutdown.reason).toBe('SIGTERM');
    remove();
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});

describe('what a stop leaves undone', () => {
  it('says what was not done and that the next run takes it up', () => {
    const stopped = new RotationStopped('due, not rotated');
    expect(stopped).toBeInstanceOf(Error);
    expect(stopped.name).toBe('RotationStopped');
    expect(stopped.message).toMatch(/^due, not rotated: .*next run/);
  });

  it('unref leaves alone what cannot be unref’d', () => {
    expect(() => unref(undefined)).not.toThrow();
    expect(() => unref({})).not.toThrow();
    let unrefd = false;
    unref({ unref: () => (unrefd = true) });
    expect(unrefd).toBe(true);
  });
});
