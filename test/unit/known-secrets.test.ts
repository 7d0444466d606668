import { describe, expect, it } from 'vitest';

import { scrubSecrets, Secret } from '../../src/secret.js';

/**
 * Every secret the process held is scrubbed from what it lets in and writes out, from a list bounded
 * at 1000 so that a long-lived daemon does not grow: the least recently used is forgotten first.
 * The canary values share no piece of 8 characters with each other, so each is matched alone.
 */
const KEPT = 1000;
let made = 0;
/** `n` secrets that are new to the process, as rotations make them. */
function newerSecrets(n: number): void {
  for (let i = 0; i < n; i++) new Secret(`newer${String(made++).padStart(7, '0')}`);
}
/** Whether `canary` is still known: scrubbed from text, or left as it is (forgotten). */
function held(canary: string): boolean {
  const text = scrubSecrets(`said ${canary}`);
  if (text === `said ${canary}`) return false;
  expect(text).not.toContain(canary);
  return true;
}

describe('the bounded list of known secrets', () => {
  it(`forgets a secret once ${KEPT} newer ones were made`, () => {
    new Secret('Kq7vLp2XwZ9mRt4N-first');
    newerSecrets(KEPT - 1);
    expect(held('Kq7vLp2XwZ9mRt4N-first')).toBe(true);
    newerSecrets(1);
    expect(held('Kq7vLp2XwZ9mRt4N-first')).toBe(false);
  });

  it('forgets a secret never scrubbed before it was forgotten', () => {
    new Secret('Hs3dJw8YcB1nVe6Q-unscrubbed');
    newerSecrets(KEPT);
    expect(held('Hs3dJw8YcB1nVe6Q-unscrubbed')).toBe(false);
  });

  it('forgets, one after the other, each of the oldest secrets', () => {
    new Secret('Tg5kWq2PzX8cLm1R-oldest');
    new Secret('Ub9nEr4JyH6vSa3D-second');
    newerSecrets(KEPT - 1);
    expect(held('Tg5kWq2PzX8cLm1R-oldest')).toBe(false);
    expect(held('Ub9nEr4JyH6vSa3D-second')).toBe(true);
    newerSecrets(1);
    expect(held('Ub9nEr4JyH6vSa3D-second')).toBe(false);
  });

  it(`keeps a secret in use, and forgets it ${KEPT} newer secrets after its last use`, () => {
    const inUse = new Secret('Mf2cQx7BvN4kZp9W-in-use');
    expect(held(inUse.reveal())).toBe(true);
    newerSecrets(KEPT - 1);
    inUse.reveal();
    newerSecrets(KEPT - 1);
    expect(held('Mf2cQx7BvN4kZp9W-in-use')).toBe(true);
    newerSecrets(1);
    expect(held('Mf2cQx7BvN4kZp9W-in-use')).toBe(false);
  });

  it('forgets a secret used again and then left unused, whether or not anything was scrubbed meanwhile', () => {
    const reused = new Secret('Ra8wYe3MtK5hGd2J-reused');
    expect(held(reused.reveal())).toBe(true);
    reused.reveal();
    newerSecrets(KEPT);
    expect(held('Ra8wYe3MtK5hGd2J-reused')).toBe(false);
  });

  it('does not let values too short to be secrets push a real one out', () => {
    new Secret('Pv6tNs1GxC7bFj4L-cred');
    newerSecrets(KEPT - 1);
    for (const short of ['', '0', 'on', 'yes', 'true', 'abc1234']) new Secret(short);
    // Checked by value: reveal() would make it the newest again.
    expect(held('Pv6tNs1GxC7bFj4L-cred')).toBe(true);
  });

  it('does not scrub values too short to be secrets from ordinary text', () => {
    for (const short of ['', 'on', 'abc1234']) new Secret(short);
    expect(scrubSecrets('turn it on: abc1234')).toBe('turn it on: abc1234');
  });
});
