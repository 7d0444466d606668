import { describe, expect, it } from 'vitest';

import { expectNoFragment } from '../helpers/leaks.js';

/** The emulator's secrets are `xaat-<uuid>`; journal records carry other UUIDs (rotation ids). */
const SECRET = 'xaat-1234567e-816f-4abc-9def-0123456789ab';

describe('the leak check for pieces of a secret', () => {
  it('does not take another UUID for a piece of a UUID-shaped secret when they share only their hyphens and version', () => {
    const journal = '{"rotationId":"0000000e-816f-4999-8999-999999999999"}';
    expect(() => expectNoFragment({ journal }, [SECRET])).not.toThrow();
  });

  it('still finds a piece cut across the hyphens', () => {
    const printed = SECRET.slice(13, 29); // cut -c 14-29
    expect(() => expectNoFragment({ stderr: `failed: ${printed}` }, [SECRET])).toThrow(/a piece of a secret leaked into stderr/);
  });

  it('still finds a piece folded over lines', () => {
    const folded = SECRET.match(/.{1,3}/g)!.join('\n');
    expect(() => expectNoFragment({ stderr: folded }, [SECRET])).toThrow(/leaked into stderr/);
  });
});
