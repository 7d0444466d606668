import { describe, expect, it } from 'vitest';

import { didYouMean, nearestName } from '../../src/common/nearest-name.js';

describe('the known name a mistyped one most likely meant', () => {
  it('ignores case and finds a name a few edits away', () => {
    expect(nearestName('renewbefore', ['name', 'id', 'renewBefore', 'overlap'])).toBe('renewBefore');
    expect(nearestName('ROTATOR_STATE_BACKED', ['ROTATOR_STATE_DIR', 'ROTATOR_STATE_BACKEND', 'ROTATOR_STATE_KEY'])).toBe(
      'ROTATOR_STATE_BACKEND',
    );
    expect(didYouMean('overlpa', ['overlap'])).toBe('; did you mean overlap?');
  });

  it('guesses nothing for a name unlike every known one, nor turns a short name into another', () => {
    expect(nearestName('colour', ['name', 'id', 'renewBefore', 'overlap'])).toBeUndefined();
    expect(nearestName('ab', ['id'])).toBeUndefined();
    expect(didYouMean('colour', ['name'])).toBe('');
  });

  it('prefers the closest of several', () => {
    expect(nearestName('ROTATOR_STATE_KEY_FIL', ['ROTATOR_STATE_KEY', 'ROTATOR_STATE_KEY_FILE'])).toBe('ROTATOR_STATE_KEY_FILE');
  });
});
