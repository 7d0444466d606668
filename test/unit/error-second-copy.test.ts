import { describe, expect, it, vi } from 'vitest';

import { ApiError, ConfigError, RotatorError } from '../../src/errors.js';

/** A second copy of errors.ts, as the emulator's tsc output brings beside the bundled CLI. */
async function secondCopy(): Promise<typeof import('../../src/errors.js')> {
  vi.resetModules();
  return import('../../src/errors.js');
}

describe('an error thrown by a second copy of the errors module', () => {
  it('is recognised by its class and every class it extends, and by no other', async () => {
    const other = await secondCopy();
    expect(other.ConfigError).not.toBe(ConfigError);
    const error = new other.ConfigError([{ path: 'ROTATOR_LISTEN', message: 'port in use' }]);
    expect(error instanceof ConfigError).toBe(true);
    expect(error instanceof RotatorError).toBe(true);
    expect(error instanceof ApiError).toBe(false);
    expect(new Error('plain') instanceof RotatorError).toBe(false);
    expect((null as unknown) instanceof RotatorError).toBe(false);
    expect({ code: 'ERR_CONFIG' } instanceof ConfigError).toBe(false);
  });

  it('keeps the codes out of what a log line or JSON shows', () => {
    const error = new ConfigError([{ path: 'a', message: 'b' }]);
    expect(Object.keys(error)).not.toContain('codes');
    expect(JSON.stringify(error)).not.toContain('ERR_ROTATOR');
  });
});
