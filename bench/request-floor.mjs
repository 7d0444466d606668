// Row 2b (goal 5 of issue 25: the request floor stays), the daemon: every request the emulator serves while a daemon checks its tokens
// twice (at start, then on its schedule). The OAuth token is to be cached across the checks.
import { childEnv, CLI, freePort, rotatorFolder, seedTokens, startCountedEmulator, startNode, waitFor } from './lib.mjs';
import { describeRequests, floorVerdict } from './throughput.mjs';

export async function daemonTwoChecks({ count }) {
  const { emulator, counter } = await startCountedEmulator();
  // Not due, and already deployed: each check is one GET, and nothing is rotated.
  const tokens = seedTokens(emulator, count, { due: 0, prefix: 'daemon' });
  const folder = await rotatorFolder(emulator, tokens, {
    defaults: { schedule: '*/2 * * * * *' },
    deployed: tokens,
    env: { ROTATOR_LISTEN: `127.0.0.1:${await freePort()}` },
  });
  const ids = new Set(tokens.map((t) => t.id));
  const daemon = startNode([CLI, 'daemon', ...folder.args], { cwd: folder.dir, env: childEnv() });
  let kinds;
  try {
    const done = await waitFor(() => counter.classify(ids).checkGet >= 2 * count, 60_000);
    kinds = counter.classify(ids);
    if (!done) throw new Error(`the daemon did not check every token twice in 60 s: ${describeRequests(kinds)}\n${daemon.stderr()}`);
  } finally {
    await daemon.stop();
    await emulator.close();
    await folder.remove();
  }
  const verdict = floorVerdict(kinds, { checked: 2 * count, rotated: 0 });
  return {
    id: '2b',
    goal: `2 request floor: daemon, ${count} tokens, 2 checks`,
    target: `${2 * count} GET + 1 token (+≤1 discovery)`,
    measured: `${verdict.served} = ${describeRequests(kinds)}`,
    baseline: `floor ${verdict.floor}`,
    result: verdict.ok ? 'pass' : 'short',
    value: verdict.served,
    unit: 'requests',
    details: { ...kinds, floor: verdict.floor },
  };
}
