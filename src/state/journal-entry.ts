import * as z from 'zod';

import { isTokenId, tokenIdProblem } from '../common/token-id.js';
import { documentMacSchema } from './document-mac.js';
import { storedSecretSchema } from './secret-box.js';

export const JOURNAL_VERSION = 1;
const isoDate = z.iso.datetime({ offset: true });
const tokenId = z.string().refine(isTokenId, { error: (issue) => tokenIdProblem(issue.input) ?? 'not a token id' });

/** What every phase records: which rotation of which name, from which token, asking what. */
const rotationShape = {
  version: z.literal(JOURNAL_VERSION),
  name: z.string().min(1),
  /**
   * This rotation, as every sink that holds its secret knows it (a write retried after a crash is
   * recognised by it). Absent in entries written before rotation ids: see `rotationIdOf`.
   */
  rotationId: z.string().min(1).optional(),
  reason: z.string(),
  startedAt: isoDate,
  oldId: tokenId,
  /** The old token's expiry before we asked: what "nothing moved" looks like. */
  oldExpiresAt: isoDate.nullable(),
  existingTokenExpiresAt: isoDate,
  newTokenExpiresAt: isoDate.nullable(),
  /** Sinks (by target) that hold the staged secret; empty before staging. */
  delivered: z.array(z.string()),
  /** The whole entry authenticated by the state key (`state/authenticated-state.ts`); absent without a key. */
  mac: documentMacSchema.optional(),
};

/** Written before regenerate is sent: an answer may be lost, and this says what to reconcile. */
export const intentEntrySchema = z.strictObject({ ...rotationShape, phase: z.literal('intent') });

/** The answer, journalled before any sink is touched: from here the secret cannot be lost. */
export const stagedEntrySchema = z.strictObject({
  ...rotationShape,
  phase: z.literal('staged'),
  staged: z.strictObject({
    newId: tokenId,
    newExpiresAt: isoDate.nullable(),
    stagedAt: isoDate,
    secret: storedSecretSchema,
  }),
  /**
   * The last verification of the delivered secret failed: what was checked and why. Nothing was
   * committed; `status` shows it beside the old token's deadline, and the next run verifies again.
   */
  verifyFailed: z.strictObject({ check: z.enum(['service', 'read-back', 'probe']), message: z.string(), at: isoDate }).optional(),
});

/**
 * A secret the service answered with an id we cannot use (missing, or not a plain path segment).
 * It is the only copy of a working credential, so it is kept; it cannot be delivered or tracked,
 * so the name stops here until an operator has dealt with it.
 */
export const heldEntrySchema = z.strictObject({
  ...rotationShape,
  phase: z.literal('held'),
  held: z.strictObject({ problem: z.string(), heldAt: isoDate, secret: storedSecretSchema }),
});

/** One unfinished rotation of one name. Erased, secret included, on commit. */
export const journalEntrySchema = z.discriminatedUnion('phase', [intentEntrySchema, stagedEntrySchema, heldEntrySchema]);

export type JournalEntry = z.output<typeof journalEntrySchema>;
export type IntentEntry = z.output<typeof intentEntrySchema>;
export type StagedEntry = z.output<typeof stagedEntrySchema>;
export type HeldEntry = z.output<typeof heldEntrySchema>;

/** The rotation's id; an entry from before rotation ids gets one that is stable for it. */
export function rotationIdOf(entry: { name: string; startedAt: string; rotationId?: string | undefined }): string {
  return entry.rotationId ?? `${entry.name}@${entry.startedAt}`;
}
