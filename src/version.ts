import { readFileSync } from 'node:fs';

/**
 * token-rotator's version, from its package.json (one folder up from dist/ and from src/ alike).
 * Read on first use, not at import, and once: the command line parser and metrics both ask.
 */
let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  try {
    cached = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    cached = 'unknown';
  }
  return cached;
}
