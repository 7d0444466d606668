/** The only place the wall clock is read; everything else takes a `Clock`. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(Date.now()),
};

/** A clock that only moves when told: for tests and the demo's seeded scenarios. */
export function fixedClock(at: Date | string): Clock & { advance(ms: number): void } {
  let current = new Date(at).getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
  };
}
