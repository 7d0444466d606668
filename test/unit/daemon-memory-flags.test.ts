import { describe, expect, it } from 'vitest';

import { daemonMemoryFlags } from '../../src/daemon/memory-flags.js';

const ALL = ['--semi-space-growth-factor=1', '--no-turbofan', '--no-maglev', '--no-sparkplug', '--optimize-for-size'];

describe('the V8 flags the daemon sets for its resident memory', () => {
  it('all of them when the user gave none', () => {
    expect(daemonMemoryFlags([], undefined)).toEqual(ALL);
    expect(daemonMemoryFlags(['--enable-source-maps'], '--max-old-space-size=256 --stack-trace-limit=50')).toEqual(ALL);
  });

  it("a flag of the user's on the same subject wins, on the command line or in NODE_OPTIONS", () => {
    expect(daemonMemoryFlags([], '--max-semi-space-size=1')).toEqual(ALL.filter((f) => !f.includes('semi-space')));
    expect(daemonMemoryFlags(['--turbofan'], undefined)).toEqual(ALL.filter((f) => f !== '--no-turbofan'));
    expect(daemonMemoryFlags(['--opt'], undefined)).toEqual(ALL.filter((f) => f !== '--no-turbofan'));
    expect(daemonMemoryFlags([], '--maglev')).toEqual(ALL.filter((f) => f !== '--no-maglev'));
    expect(daemonMemoryFlags([], '--sparkplug')).toEqual(ALL.filter((f) => f !== '--no-sparkplug'));
    expect(daemonMemoryFlags(['--max-opt=3'], undefined)).toEqual(['--semi-space-growth-factor=1', '--optimize-for-size']);
    expect(daemonMemoryFlags(['--no_optimize_for_size'], undefined)).toEqual(ALL.filter((f) => f !== '--optimize-for-size'));
    expect(daemonMemoryFlags([], '--jitless')).toEqual(['--semi-space-growth-factor=1', '--optimize-for-size']);
  });

  it('a flag that only looks alike is not taken for one', () => {
    expect(daemonMemoryFlags(['--stack-size=2000', '--max-old-space-size=256', '--options'], '--no-deprecation --opt-in')).toEqual(ALL);
  });
});
