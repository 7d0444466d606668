import { z } from 'zod';

import { storedSecretSchema } from './secret-box.js';

export const JOURNAL_VERSION = 1;
const isoDate = z.iso.datetime({ offset: true });

/**
 * One unfinished rotation of one name. `intent` is written before regenerate is sent; `staged`
 * holds the new id and secret before any sink is touched. Erased, secret included, on commit.
 */
export const journalEntrySchema = z.strictObject({
  version: z.literal(JOURNAL_VERSION),
  name: z.string().min(1),
  phase: z.enum(['intent', 'staged']),
  reason: z.string(),
  startedAt: isoDate,
  oldId: z.string().min(1),
  /** The old token's expiry before we asked: what "nothing moved" looks like. */
  oldExpiresAt: isoDate.nullable(),
  existingTokenExpiresAt: isoDate,
  newTokenExpiresAt: isoDate.nullable(),
  staged: z
    .strictObject({
      newId: z.string().min(1),
      newExpiresAt: isoDate.nullable(),
      stagedAt: isoDate,
      secret: storedSecretSchema,
    })
    .optional(),
  /** Sinks (by target) that hold the staged secret. */
  delivered: z.array(z.string()),
});

export type JournalEntry = z.output<typeof journalEntrySchema>;
