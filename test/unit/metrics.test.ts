import { describe, expect, it } from 'vitest';

import { createMetrics } from '../../src/daemon/metrics.js';
import type { TokenOutcome } from '../../src/rotation/outcome.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const base = { name: 'a', oldId: 'id1', expiresAt: '2026-04-01T00:00:00.000Z', sinks: [], orphans: [] };

async function read(metrics: ReturnType<typeof createMetrics>) {
  const text = await metrics.registry.metrics();
  const value = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  return { text, value };
}

describe('daemon metrics', () => {
  it('build info is 1 with the version and Node labels', async () => {
    const metrics = createMetrics({ version: '1.2.3', node: 'v24.0.0' });
    expect((await read(metrics)).value('token_rotator_build_info{version="1.2.3",node="v24.0.0"}')).toBe(1);
  });

  it('a stop is counted as interrupted: no failure, no failed rotation, the failure count kept', async () => {
    const metrics = createMetrics();
    metrics.track([{ name: 'a', sinks: ['file a.token'], reloads: [] }]);
    metrics.seed('a', { lastRotatedAt: '2026-02-01T00:00:00.000Z', consecutiveFailures: 2 });
    metrics.observeOutcome({ ...base, action: 'interrupted', stage: 'check', reason: 'stopped' }, NOW);
    metrics.observeOutcome({ ...base, action: 'interrupted', stage: 'rotation', reason: 'stopped', pending: ['file a.token'] }, NOW);
    const { value } = await read(metrics);
    expect(value('token_rotator_checks_total{token="a",result="interrupted"}')).toBe(2);
    expect(value('token_rotator_checks_total{token="a",result="failure"}')).toBe(0);
    expect(value('token_rotator_rotations_total{token="a",result="interrupted"}')).toBe(1);
    expect(value('token_rotator_rotations_total{token="a",result="failure"}')).toBe(0);
    expect(value('token_rotator_consecutive_failures{token="a"}')).toBe(2);
    expect(value('token_rotator_pending_deliveries{token="a"}')).toBe(1);
    expect(value('token_rotator_last_rotation_timestamp_seconds{token="a"}')).toBe(Date.parse('2026-02-01T00:00:00Z') / 1000);
    expect(value('token_rotator_last_successful_check_timestamp_seconds{token="a"}')).toBeUndefined();
  });

  it('a failed check is not a failed rotation; a failure after the regenerate is; a success resets the count', async () => {
    const metrics = createMetrics();
    metrics.track([{ name: 'a', sinks: [], reloads: [] }]);
    const error = { code: 'ERR_API', message: 'boom', status: 503 };
    metrics.observeOutcome({ ...base, action: 'failed', stage: 'check', reason: 'boom', error }, NOW);
    metrics.observeOutcome({ ...base, action: 'failed', stage: 'rotation', reason: 'boom', error }, NOW);
    let { value } = await read(metrics);
    expect(value('token_rotator_checks_total{token="a",result="failure"}')).toBe(2);
    expect(value('token_rotator_rotations_total{token="a",result="failure"}')).toBe(1);
    expect(value('token_rotator_consecutive_failures{token="a"}')).toBe(2);

    const rotated: TokenOutcome = { ...base, action: 'rotated', reason: 'due', newId: 'id2', newExpiresAt: '2026-05-01T00:00:00.000Z' };
    metrics.observeOutcome(rotated, NOW);
    ({ value } = await read(metrics));
    expect(value('token_rotator_rotations_total{token="a",result="success"}')).toBe(1);
    expect(value('token_rotator_consecutive_failures{token="a"}')).toBe(0);
    expect(value('token_rotator_last_rotation_timestamp_seconds{token="a"}')).toBe(NOW.getTime() / 1000);
    expect(value('token_rotator_last_successful_check_timestamp_seconds{token="a"}')).toBe(NOW.getTime() / 1000);
    expect(value('token_rotator_token_expiry_timestamp_seconds{token="a"}')).toBe(Date.parse('2026-05-01T00:00:00Z') / 1000);
  });

  it('follows the policy: a new name starts at 0, a departed one loses every series, a stray keeps its own', async () => {
    const metrics = createMetrics();
    metrics.track([{ name: 'a', sinks: ['file a.token'], reloads: ['webhook A_URL'] }]);
    metrics.observeOutcome({ ...base, action: 'skipped', reason: 'not due' }, NOW);
    metrics.setNextCheck('a', NOW);
    metrics.setPending('stray', 1);
    metrics.track([{ name: 'b', sinks: ['file b.token'], reloads: [] }], ['stray']);
    const { text, value } = await read(metrics);
    expect(text).not.toMatch(/token="a"/);
    expect(value('token_rotator_checks_total{token="b",result="success"}')).toBe(0);
    expect(value('token_rotator_sink_writes_total{token="b",sink="file b.token",result="updated"}')).toBe(0);
    expect(value('token_rotator_sink_drift{token="b",sink="file b.token"}')).toBe(0);
    expect(value('token_rotator_pending_deliveries{token="stray"}')).toBe(1);
  });
});
