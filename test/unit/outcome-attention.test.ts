import { describe, expect, it } from 'vitest';

import { ApiError, SinkError, UNEXPECTED_ERROR_CODE } from '../../src/errors.js';
import type { DriftFinding } from '../../src/policy/sink-drift.js';
import { errorSummary, iso, needsAttention, sinksHoldCurrent, type TokenOutcome } from '../../src/rotation/outcome.js';
import { named } from '../fakes/expectations.js';

const outcome = (overrides: Partial<TokenOutcome> = {}): TokenOutcome => ({
  name: 'ingest',
  action: 'skipped',
  check: 'notDue',
  reason: 'not due',
  oldId: 'tok-1',
  expiresAt: null,
  sinks: [],
  orphans: [],
  ...overrides,
});
const drift = (kind: DriftFinding['kind']): DriftFinding => ({ target: 'memory:b', sink: 'memory b', kind });
const orphan: TokenOutcome['orphans'][number] = {
  name: 'ingest',
  oldId: 'tok-1',
  regeneratedAt: '2026-11-22T12:00:00.000Z',
  detectedAt: '2026-11-22T12:00:01.000Z',
  oldTokenWorksUntil: null,
};

describe('what makes `once` exit 1: an outcome that leaves something for a person to do', () => {
  it.each(
    named([
      { case: 'a skipped name with nothing lacking needs nobody', o: outcome(), attention: false },
      { case: 'a rotated name needs nobody', o: outcome({ action: 'rotated' }), attention: false },
      { case: 'an interrupted name needs nobody: the next run takes it up', o: outcome({ action: 'interrupted' }), attention: false },
      { case: 'a failure does', o: outcome({ action: 'failed' }), attention: true },
      {
        case: 'an orphan does, even when the name was rotated again',
        o: outcome({ action: 'rotated', orphans: [orphan] }),
        attention: true,
      },
      {
        case: 'drift a rotation repaired needs nobody',
        o: outcome({ action: 'rotated', drift: [drift('missing'), drift('foreign')] }),
        attention: false,
      },
      {
        case: 'drift a redelivery repaired needs nobody',
        o: outcome({ action: 'redelivered', drift: [drift('missing')] }),
        attention: false,
      },
      { case: 'drift only reported (onDrift: report) does', o: outcome({ action: 'skipped', drift: [drift('missing')] }), attention: true },
      {
        case: 'a sink that cannot be read does, even after a rotation',
        o: outcome({ action: 'rotated', drift: [drift('unreadable')] }),
        attention: true,
      },
      {
        case: 'a sink another writer owns does, even after a rotation',
        o: outcome({ action: 'rotated', drift: [drift('unowned')] }),
        attention: true,
      },
      {
        case: 'a reload that failed does',
        o: outcome({
          action: 'rotated',
          reloads: [
            { target: 'a', result: 'restarted' },
            { target: 'b', result: 'failed' },
          ],
        }),
        attention: true,
      },
      {
        case: 'reloads that worked or were skipped need nobody',
        o: outcome({
          action: 'rotated',
          reloads: [
            { target: 'a', result: 'restarted' },
            { target: 'b', result: 'skipped' },
          ],
        }),
        attention: false,
      },
    ]),
  )('%s', (_case, { o, attention }) => {
    expect(needsAttention(o)).toBe(attention);
  });
});

describe('whether every sink holds the current secret after an outcome (what a pod’s start waits for)', () => {
  it.each(
    named([
      { case: 'a name found with nothing lacking: yes', o: outcome(), holds: true },
      { case: 'rotated: yes', o: outcome({ action: 'rotated', check: 'tokenNearingExpiry' }), holds: true },
      { case: 'redelivered what was missing: yes', o: outcome({ action: 'redelivered', drift: [drift('missing')] }), holds: true },
      { case: 'failed: no', o: outcome({ action: 'failed' }), holds: false },
      { case: 'interrupted: no', o: outcome({ action: 'interrupted' }), holds: false },
      { case: 'another process holds the name (busy): not known, so no', o: outcome({ check: 'busy' }), holds: false },
      { case: 'backing off: no', o: outcome({ check: 'backoff' }), holds: false },
      { case: 'drift only reported: no', o: outcome({ drift: [drift('missing')] }), holds: false },
      { case: 'an unreadable sink after a rotation: no', o: outcome({ action: 'rotated', drift: [drift('unreadable')] }), holds: false },
      { case: 'an orphan does not make a sink lack the secret: yes', o: outcome({ action: 'rotated', orphans: [orphan] }), holds: true },
    ]),
  )('%s', (_case, { o, holds }) => {
    expect(sinksHoldCurrent(o)).toBe(holds);
  });
});

describe('an error as an outcome carries it', () => {
  it('a rotator error keeps its code and message', () => {
    expect(errorSummary(new SinkError('cannot write memory b'))).toEqual({ code: SinkError.code, message: 'cannot write memory b' });
  });

  it('the service’s HTTP status is kept for an API error, and only for one', () => {
    expect(errorSummary(new ApiError('retrieve: 404', { op: 'retrieve', status: 404 }))).toEqual({
      code: ApiError.code,
      message: 'retrieve: 404',
      status: 404,
    });
    expect(errorSummary(new ApiError('retrieve: reset', { op: 'retrieve' }))).not.toHaveProperty('status');
    expect(errorSummary(Object.assign(new Error('not from the service'), { status: 500 }))).not.toHaveProperty('status');
  });

  it('anything else is unexpected, with its message; a thrown non-error is its text', () => {
    expect(errorSummary(new TypeError('x is undefined'))).toEqual({ code: UNEXPECTED_ERROR_CODE, message: 'x is undefined' });
    expect(errorSummary(Object.assign(new Error('numbered'), { code: 42 }))).toEqual({ code: UNEXPECTED_ERROR_CODE, message: 'numbered' });
    expect(errorSummary('a string')).toEqual({ code: UNEXPECTED_ERROR_CODE, message: 'a string' });
    expect(errorSummary(undefined)).toEqual({ code: UNEXPECTED_ERROR_CODE, message: 'undefined' });
    expect(errorSummary(null)).toEqual({ code: UNEXPECTED_ERROR_CODE, message: 'null' });
  });

  it('times are ISO, or null', () => {
    expect(iso(new Date('2026-11-22T12:00:00Z'))).toBe('2026-11-22T12:00:00.000Z');
    expect(iso(null)).toBeNull();
  });
});
