import { describe, expect, it } from 'vitest';

import { EXPIRY_ROUNDING_MS, expiryWarning, retrievedProblem } from '../../src/verify/verify-rules.js';

const asked = new Date('2027-01-01T00:00:00.000Z');
const expected = { newId: 'tok-2', serviceName: 'ingest', askedExpiresAt: asked };

describe('the built-in check of a new token', () => {
  it('accepts the id asked for, the replaced token’s name and the expiry asked, within the service’s rounding', () => {
    expect(retrievedProblem(expected, { id: 'tok-2', name: 'ingest', expiresAt: asked })).toBeUndefined();
    const rounded = new Date(asked.getTime() - EXPIRY_ROUNDING_MS);
    expect(retrievedProblem(expected, { id: 'tok-2', name: 'ingest', expiresAt: rounded })).toBeUndefined();
  });

  it('refuses another id and another name: what breaks consumers', () => {
    expect(retrievedProblem(expected, { id: 'tok-3', name: 'ingest', expiresAt: asked })).toBe(
      'the service answered token tok-3 for tok-2',
    );
    expect(retrievedProblem(expected, { id: 'tok-2', name: 'other', expiresAt: asked })).toBe(
      "token tok-2 is named 'other', not 'ingest' like the token it replaces",
    );
  });

  it('only warns of an expiry far from the one asked, or of a token that never expires: the token works', () => {
    const early = new Date(asked.getTime() - EXPIRY_ROUNDING_MS - 1000);
    expect(retrievedProblem(expected, { id: 'tok-2', name: 'ingest', expiresAt: early })).toBeUndefined();
    expect(expiryWarning(expected, { id: 'tok-2', name: 'ingest', expiresAt: early })).toMatch(
      /expires .* not 2027-01-01T00:00:00.000Z as asked/,
    );
    expect(retrievedProblem(expected, { id: 'tok-2', name: 'ingest', expiresAt: null })).toBeUndefined();
    expect(expiryWarning(expected, { id: 'tok-2', name: 'ingest', expiresAt: null })).toBe(
      'token tok-2 never expires, but 2027-01-01T00:00:00.000Z was asked',
    );
    expect(expiryWarning(expected, { id: 'tok-2', name: 'ingest', expiresAt: asked })).toBeUndefined();
  });

  it('checks no name it never saw, and no expiry when none was asked', () => {
    const loose = { newId: 'tok-2', serviceName: undefined, askedExpiresAt: null };
    expect(retrievedProblem(loose, { id: 'tok-2', name: 'anything', expiresAt: null })).toBeUndefined();
    expect(retrievedProblem(loose, { id: 'tok-2', name: 'anything', expiresAt: asked })).toBeUndefined();
    expect(expiryWarning(loose, { id: 'tok-2', name: 'anything', expiresAt: asked })).toBeUndefined();
  });
});
