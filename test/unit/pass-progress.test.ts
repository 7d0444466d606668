import { describe, expect, it } from 'vitest';

import { trackProgress } from '../../src/rotation/progress.js';
import { captureLogs } from '../fakes/fake-deps.js';
import { manualTimers } from '../fakes/manual-timers.js';

/** The progress lines logged so far, by their fields. */
function progressLines(lines: string[]) {
  return lines
    .map((l) => JSON.parse(l) as { level: string; done?: number; total?: number; inProgress?: string[] })
    .filter((l) => l.total !== undefined)
    .map(({ level, done, total, inProgress }) => ({ level, done, total, inProgress }));
}

describe('progress of a pass: how far it is, and which names are still being worked on', () => {
  it('says nothing before the first delay, then reports done, total and the names in progress each time its timer fires', () => {
    const { timers, armed, fire } = manualTimers();
    const logs = captureLogs('info');
    const progress = trackProgress({ total: 3, logger: logs.logger, timers });
    expect(
      armed.map((t) => t.ms),
      'the first line only after a pass lasts 2 s',
    ).toEqual([2000]);
    expect(logs.lines).toEqual([]);

    progress.started('a');
    progress.started('b');
    progress.finished('a');
    fire();
    expect(
      armed.map((t) => t.ms),
      'then every 5 s',
    ).toEqual([2000, 5000]);
    progress.started('c');
    progress.finished('b');
    fire();
    expect(progressLines(logs.lines)).toEqual([
      { level: 'info', done: 1, total: 3, inProgress: ['b'] },
      { level: 'info', done: 2, total: 3, inProgress: ['c'] },
    ]);
  });

  it('a hung name stays in the list while the others finish', () => {
    const { timers, fire } = manualTimers();
    const logs = captureLogs('info');
    const progress = trackProgress({ total: 2, logger: logs.logger, timers });
    progress.started('hung');
    progress.started('quick');
    progress.finished('quick');
    fire();
    expect(progressLines(logs.lines)).toEqual([{ level: 'info', done: 1, total: 2, inProgress: ['hung'] }]);
  });

  it('honours the delays it is given', () => {
    const { timers, armed, fire } = manualTimers();
    trackProgress({ total: 1, logger: captureLogs('info').logger, timers, firstAfterMs: 10, everyMs: 20 });
    fire();
    expect(armed.map((t) => t.ms)).toEqual([10, 20]);
  });

  it('once stopped it clears its timer, and a timer firing late says nothing and arms no other', () => {
    const { timers, armed, fire } = manualTimers();
    const logs = captureLogs('info');
    const progress = trackProgress({ total: 2, logger: logs.logger, timers });
    fire();
    progress.stop();
    expect(armed.map((t) => t.cleared)).toEqual([false, true]);
    fire();
    expect(armed).toHaveLength(2);
    expect(progressLines(logs.lines)).toHaveLength(1);
  });

  it('never keeps the process alive: every timer it arms is unref’d', () => {
    const { timers, armed, fire } = manualTimers();
    trackProgress({ total: 1, logger: captureLogs('info').logger, timers });
    fire();
    expect(armed.map((t) => t.unrefd)).toEqual([true, true]);
  });

  it('uses the real timers when given none, and its line comes once the delay passes', async () => {
    const logs = captureLogs('info');
    const progress = trackProgress({ total: 1, logger: logs.logger, firstAfterMs: 0 });
    progress.started('only');
    while (logs.lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    progress.stop();
    expect(progressLines(logs.lines)).toEqual([{ level: 'info', done: 0, total: 1, inProgress: ['only'] }]);
  });
});
