import { readFileSync } from 'node:fs';

/**
 * The version the bundle was built as (scripts/bundle.mjs defines it from package.json): the
 * bundle's files are not where `../package.json` points. Undefined in tsc's output and under tests.
 */
declare const __TOKEN_ROTATOR_VERSION__: string | undefined;

/**
 * token-rotator's version: fixed at build time in the bundle; elsewhere from its package.json (one
 * folder up from dist/ and from src/ alike). Read on first use, not at import, and once: the command
 * line parser and metrics both ask.
 */
let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  if (typeof __TOKEN_ROTATOR_VERSION__ === 'string') return (cached = __TOKEN_ROTATOR_VERSION__);
  try {
    cached = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    cached = 'unknown';
  }
  return cached;
}
