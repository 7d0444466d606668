// Goal 4 of issue 25 (rows 6a-6c): `plan` over N tokens at zero latency (wall time and peak RSS), then `once` over
// the same N with a tenth due. The tokens that are not due are already deployed (their sink holds
// their secret), so `once` adopts them and rotates only the due ones.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { childEnv, mb, rotatorFolder, runCli, sec, seedTokens, startCountedEmulator } from './lib.mjs';
import { describeRequests } from './throughput.mjs';

export async function scale({ count, due }) {
  const { emulator, counter } = await startCountedEmulator();
  const tokens = seedTokens(emulator, count, { due, prefix: 'scale' });
  const folder = await rotatorFolder(emulator, tokens, { deployed: tokens.slice(due) });
  const ids = new Set(tokens.map((t) => t.id));
  try {
    const plan = await runCli(['plan', '--json', ...folder.args], { cwd: folder.dir, env: childEnv(), peakRss: true });
    let planned = [];
    try {
      // A list of decisions, or an envelope with them as its items.
      const parsed = JSON.parse(plan.stdout);
      planned = Array.isArray(parsed) ? parsed : (parsed.items ?? []);
    } catch {
      // reported below
    }
    const planKinds = counter.classify(ids);
    // API requests in flight at once during the plan: bounded by the rotator's concurrency, or not.
    const planPeakInflight = counter.peakInflight;
    const toRotate = planned.filter((p) => p.action === 'rotate').length;
    const planOk = plan.code === 0 && planned.length === count && (toRotate === due || !planned.some((p) => 'action' in p));
    counter.reset();
    const before = emulator.requests.length;
    const once = await runCli(['once', ...folder.args], { cwd: folder.dir, env: childEnv(), peakRss: true });
    const rotated = emulator.requests.slice(before).filter((r) => r.op === 'regenerate' && r.status === 200).length;
    const delivered = (await readdir(join(folder.dir, 'secrets'))).length;
    const onceOk = once.code === 0 && rotated === due && delivered === count;
    const onceKinds = counter.classify(ids);
    const planError = planOk ? '' : ` (ERROR: exit ${plan.code}, ${planned.length} planned, ${toRotate} to rotate)`;
    return [
      {
        id: '6a',
        goal: `6 scale: plan, ${count} tokens, 0 latency: time`,
        target: '≤ 3 s',
        measured: `${sec(plan.ms)} s${planError}`,
        baseline: '-',
        result: !planOk ? 'error' : plan.ms <= 3000 ? 'pass' : 'short',
        value: plan.ms / 1000,
        unit: 's',
        details: { requests: describeRequests(planKinds), planPeakInflight, stderrTail: planOk ? undefined : plan.stderr.slice(-1500) },
      },
      {
        id: '6b',
        goal: `6 scale: plan, ${count} tokens: peak RSS`,
        target: '≤ 200 MB',
        measured: plan.peakRssBytes ? `${mb(plan.peakRssBytes)} MB${planError}` : 'not measured',
        baseline: '-',
        result: !plan.peakRssBytes ? 'n/a' : !planOk ? 'error' : plan.peakRssBytes <= 200 * 1024 * 1024 ? 'pass' : 'short',
        value: plan.peakRssBytes ? plan.peakRssBytes / 1024 / 1024 : NaN,
        unit: 'MB',
        details: { measuredBy: plan.peakRssBy },
      },
      {
        id: '6c',
        goal: `6 scale: once, ${count} tokens, ${due} due`,
        target: '≤ 10 s',
        measured: `${sec(once.ms)} s${onceOk ? '' : ` (ERROR: exit ${once.code}, ${rotated} rotated, ${delivered} delivered)`}`,
        baseline: '-',
        result: !onceOk ? 'error' : once.ms <= 10_000 ? 'pass' : 'short',
        value: once.ms / 1000,
        unit: 's',
        details: {
          peakRssMB: once.peakRssBytes ? Number(mb(once.peakRssBytes)) : undefined,
          requests: describeRequests(onceKinds),
          stderrTail: onceOk ? undefined : once.stderr.slice(-1500),
        },
      },
    ];
  } finally {
    await emulator.close();
    await folder.remove();
  }
}
