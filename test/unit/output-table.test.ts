import { describe, expect, it } from 'vitest';

import { formatOutcomes } from '../../src/cli/format-outcomes.js';
import { formatTable, terminalWidth } from '../../src/cli/format-table.js';
import type { RunItem } from '../../src/cli/output/run-items.js';

const rotated: RunItem = {
  name: 'ingest-prod',
  action: 'rotate',
  result: 'ok',
  needsAttention: false,
  check: 'tokenNearingExpiry',
  reason: 'expires in 1d 23h, within renewBefore 7d, and this reason goes on for quite a while to make the line long',
  id: 'tok-0123456789abcdef',
  expiry: 'expires',
  expiresAt: '2026-11-24T12:24:00.000Z',
  newId: 'tok-fedcba9876543210',
  newExpiresAt: '2026-12-24T12:24:00.000Z',
  existingTokenExpiresAt: '2026-11-22T13:24:00.000Z',
  sinks: [
    { type: 'file', target: '/s/a', description: 'file secrets/a.token', result: 'created' },
    { type: 'vault', target: 'v', description: 'vault secret/data/ingest#token', result: 'updated' },
  ],
  pending: [],
  orphans: [],
  drift: [],
  reloads: [],
};

describe('tables for a terminal', () => {
  it('fit the terminal by shortening the free-text column, and cut nothing when not on a terminal', () => {
    const rows = [['a', 'x'.repeat(200)]];
    const fitted = formatTable(['NAME', 'REASON'], rows, { width: 60 });
    expect(Math.max(...fitted.split('\n').map((l) => l.length))).toBeLessThanOrEqual(60);
    expect(fitted).toContain('…');
    expect(formatTable(['NAME', 'REASON'], rows)).toContain('x'.repeat(200));
  });

  it('never shorten a column below what stays readable, even when the terminal is narrower', () => {
    const fitted = formatTable(['NAME', 'REASON'], [['a', 'y'.repeat(100)]], { width: 10 });
    expect(fitted.split('\n')[1]).toBe(`a     ${'y'.repeat(19)}…`);
  });

  it('the once table fits 120 columns, says what OLD TOKEN ENDS means, and counts in words', () => {
    const text = formatOutcomes([rotated], { width: 120 });
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(120);
    expect(text).toMatch(/^TOKEN\s+ACTION\s+ID\s+EXPIRES\s+OLD TOKEN ENDS\s+SINKS\s+REASON$/m);
    expect(text).toContain('OLD TOKEN ENDS: when the replaced token stops working (the overlap)');
    // The words of the JSON: the action when it went well, else the result; counted by the summary's keys.
    expect(text).toMatch(/^ingest-prod\s+rotate\s/m);
    expect(text).toMatch(/\n1 token: rotate 1\n$/);
    const failed: RunItem = { ...rotated, name: 'b', result: 'failed', needsAttention: true };
    const both = formatOutcomes([rotated, failed]);
    expect(both).toMatch(/^b\s+failed\s/m);
    expect(both).toMatch(/\n2 tokens: rotate 1, failed 1; 1 needs attention\n$/);
  });

  it('take the width from a terminal only', () => {
    expect(terminalWidth({ isTTY: true, columns: 120 })).toBe(120);
    expect(terminalWidth({ isTTY: false, columns: 120 })).toBeUndefined();
    expect(terminalWidth({})).toBeUndefined();
  });
});
