import { describe, expect, it } from 'vitest';

import { parsePolicy } from '../../src/config/load-policy.js';
import { decide, type HistoryView } from '../../src/policy/decide.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const DAY = 24 * 3600_000;
const at = (offsetDays: number) => new Date(NOW.getTime() + offsetDays * DAY);

/** The settings a policy gives its first token, read as the CLI reads them. */
function settingsOf(yaml: string) {
  return parsePolicy(`version: 1\n${yaml}`, '/etc/rotator/rotation.yaml').tokens[0]!.settings;
}

const TOKEN = `tokens: [{ name: legacy, id: "l1", sinks: [{ type: file, path: l.token }] }]`;

function decideFor(settingsYaml: string, expiresAt: Date | null, history: HistoryView) {
  return decide({ token: { id: 'l1', expiresAt }, history, settings: settingsOf(settingsYaml), now: NOW });
}

describe('a token that never expires', () => {
  it('is rotated at 90 days by default, and the reason says why', () => {
    const decision = decideFor(TOKEN, null, { lastRotatedAt: at(-91), adoptedAt: at(-200) });
    expect(decision).toMatchObject({ action: 'rotate', check: 'tokenOlderThanMaxAge', dueAt: at(-1) });
    expect(decision.reason).toBe('never expires; last rotated 91d ago, older than maxAge 90d (default for tokens that never expire)');
  });

  it('counts its age from when it was first seen when it was never rotated, and says the age before is unknown', () => {
    const due = decideFor(TOKEN, null, { lastRotatedAt: null, adoptedAt: at(-95) });
    expect(due.action).toBe('rotate');
    expect(due.reason).toBe(
      'never expires; first seen 95d ago (its age before that is unknown), older than maxAge 90d (default for tokens that never expire)',
    );
    const fresh = decideFor(TOKEN, null, { lastRotatedAt: null, adoptedAt: at(-3) });
    expect(fresh).toMatchObject({ action: 'skip', dueAt: at(87) });
    expect(fresh.reason).toBe(
      'never expires; due in 87d by maxAge 90d (default for tokens that never expire); first seen 3d ago (its age before that is unknown)',
    );
  });

  it('takes a maxAge from the defaults or the token instead, and says which', () => {
    const fromDefaults = decideFor(`defaults: { maxAge: 30d }\n${TOKEN}`, null, { lastRotatedAt: at(-31), adoptedAt: at(-100) });
    expect(fromDefaults.reason).toBe('never expires; last rotated 31d ago, older than maxAge 30d');
    const perToken = decideFor(
      `defaults: { maxAge: 30d }\ntokens: [{ name: legacy, id: "l1", maxAge: 1w, sinks: [{ type: file, path: l.token }] }]`,
      null,
      { lastRotatedAt: at(-8), adoptedAt: at(-100) },
    );
    expect(perToken).toMatchObject({ action: 'rotate', dueAt: at(-1) });
  });

  it('is never rotated for its age with maxAge: never (or null), and the reason says maxAge is off', () => {
    for (const off of ['never', 'null']) {
      const decision = decideFor(`defaults: { maxAge: ${off} }\n${TOKEN}`, null, { lastRotatedAt: at(-1000), adoptedAt: at(-1000) });
      expect(decision).toMatchObject({ action: 'skip', dueAt: null });
      expect(decision.reason).toBe('never expires; maxAge is off ("never"), so never due');
    }
  });

  it('leaves a token that expires to its expiry when no maxAge is set', () => {
    const decision = decideFor(TOKEN, at(20), { lastRotatedAt: at(-400), adoptedAt: at(-400) });
    expect(decision).toMatchObject({ action: 'skip', check: 'notDue', dueAt: at(13) });
    expect(decision.reason).toBe('expires in 20d; due in 13d');
  });
});
