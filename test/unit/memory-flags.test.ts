import { describe, expect, it } from 'vitest';

import { DAEMON_MEMORY_FLAGS, memoryFlags, PLAN_MEMORY_FLAGS } from '../../src/cli/memory-flags.js';

const daemonMemoryFlags = (execArgv: readonly string[], nodeOptions: string | undefined) =>
  memoryFlags(DAEMON_MEMORY_FLAGS, execArgv, nodeOptions);

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

describe('the V8 flags plan sets for its peak', () => {
  it('a young generation kept small and the old one collected sooner, each unless the user spoke of it', () => {
    expect(memoryFlags(PLAN_MEMORY_FLAGS, [], undefined)).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=200']);
    expect(memoryFlags(PLAN_MEMORY_FLAGS, ['--max-semi-space-size=16'], undefined)).toEqual(['--heap-growing-percent=200']);
    expect(memoryFlags(PLAN_MEMORY_FLAGS, [], '--heap_growing_percent=50')).toEqual(['--semi-space-growth-factor=1']);
  });
});
