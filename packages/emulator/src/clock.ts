/**
 * The emulator's clock seam: the same shape as the product's `Clock`, so a test's fixed clock fits
 * both, but its own, since the emulator imports nothing of the product it stands in front of.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(Date.now()),
};
