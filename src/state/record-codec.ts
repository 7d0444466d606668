import type { z } from 'zod';

import { fromZodIssues } from '../common/config-issues.js';
import { StateError } from '../errors.js';

/** A kind of versioned record (a state record, a journal entry), however a backend stores it. */
export interface RecordKind<T> {
  /** `state record`, `journal entry`: how messages name it. */
  what: string;
  version: number;
  schema: z.ZodType<T>;
}

/** The stored form of a record, the same for every backend: so a record can move between them. */
export function encodeRecord(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A record read strictly: damaged, foreign (another name) or newer text stops with `where` (the
 * backend's own words for where it is) and `fix`, never a silent reset.
 */
export function decodeRecord<T extends { name: string }>(text: string, name: string, kind: RecordKind<T>, where: string, fix: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StateError(`${kind.what} ${where} is not valid JSON (truncated or damaged); ${fix}`);
  }
  const version = (json as { version?: unknown })?.version;
  if (version !== kind.version) {
    throw new StateError(
      `${kind.what} ${where} has version ${JSON.stringify(version)}; this token-rotator reads version ${kind.version}; ${fix}`,
    );
  }
  const parsed = kind.schema.safeParse(json, { reportInput: true });
  if (!parsed.success) {
    const problems = fromZodIssues(parsed.error.issues)
      .map((i) => `${i.path}: ${i.message}`)
      .join('; ');
    throw new StateError(`${kind.what} ${where} is damaged (${problems}); ${fix}`);
  }
  if (parsed.data.name !== name) throw new StateError(`${kind.what} ${where} belongs to '${parsed.data.name}'; ${fix}`);
  return parsed.data;
}
