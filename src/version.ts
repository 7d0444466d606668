import { readFileSync } from 'node:fs';

/**
 * token-rotator's version, from its package.json (two folders up from dist/ and from src/ alike).
 * Read on first use, not at import: `--version` and metrics want it, most commands never ask.
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
