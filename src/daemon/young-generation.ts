import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at the size it starts with, for the life of a daemon. V8 doubles it,
 * up to 32 MB per semi-space, whenever much of it survives a collection, which the first check of
 * every token does; the daemon then holds that memory while idle for hours. Kept small, it costs a
 * long-lived process nothing that matters (the idle daemon with 100 tokens: 148 → 123–130 MB resident,
 * `npm run bench`); for a `plan` over 5,000 tokens it cost 8% of the time, so only the daemon does it.
 *
 * The container image says the same with NODE_OPTIONS=--max-semi-space-size=1; heap sizes can only be
 * given on Node's command line, but the growth factor is read at each growth, so it can be set here,
 * for a daemon started with `npm start`, by systemd or by hand. A semi-space flag of the user's wins.
 */
export function keepYoungGenerationSmall(execArgv: readonly string[], nodeOptions: string | undefined): void {
  if ([...execArgv, nodeOptions ?? ''].some((arg) => /semi[-_]space/.test(arg))) return;
  setFlagsFromString('--semi-space-growth-factor=1');
}
