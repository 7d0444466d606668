import type { OutputKind } from '../output/envelope.js';

/**
 * What `--json` prints, as every command's help says it: the one envelope, never a bare array, so
 * that a CI gate such as `jq -e '.summary.needsAttention == 0'` reads every command alike.
 */
export function jsonOptionHelp(kind: OutputKind, what: string): string {
  return `print ${what} as the JSON envelope {apiVersion, kind: ${kind}, summary, problems, items} (see token-rotator/output.schema.json)`;
}
