import { describe, expect, it } from 'vitest';

import { type ProcessEntry, runProcesses } from '../../src/sinks/exec/left-behind.js';

const SELF = 10;
const LEADER = 500;
const entry = (pid: number, more: Partial<ProcessEntry> = {}): ProcessEntry => ({
  pid,
  group: pid,
  session: pid,
  zombie: false,
  marked: false,
  holdsOutput: false,
  ...more,
});

describe("which processes are a program's run", () => {
  const processes = [
    entry(1),
    entry(SELF, { marked: true }), // never the rotator itself
    entry(501, { group: LEADER, session: LEADER }), // `sleep &`: its group
    entry(502, { group: 502, session: LEADER }), // its own group, in the program's session
    entry(503, { marked: true }), // `setsid sleep`: only its marker says whose it is
    entry(504, { group: LEADER, session: LEADER, zombie: true }), // ended already
    entry(505, { marked: false }), // someone else's
    entry(507, { holdsOutput: true }), // `setsid env -i sleep`: only its hold on the output says whose it is
  ];

  it('takes its group, its session, every marked process and every holder of its output, but no zombie and never the rotator', () => {
    expect(runProcesses(processes, LEADER, true, SELF)).toEqual([501, 502, 503, 507]);
  });

  it("trusts only the marker and the output once the program's pid was given to another process, which may lead a group of that number", () => {
    const reused = [...processes, entry(LEADER), entry(506, { group: LEADER, session: LEADER })];
    expect(runProcesses(reused, LEADER, true, SELF)).toEqual([503, 507]);
  });

  it('takes the program itself while it is not reaped: a stop kills it too', () => {
    expect(runProcesses([...processes, entry(LEADER)], LEADER, false, SELF)).toEqual([LEADER, 501, 502, 503, 507]);
  });
});
