import * as z from 'zod';

import { isTokenId, tokenIdProblem } from '../common/token-id.js';
import { documentMacSchema } from './document-mac.js';
import { storedSecretSchema } from './secret-box.js';

export const STATE_VERSION = 1;
/** Earlier ids kept per name: enough to answer "which token was this?" for a year of monthly rotations. */
export const MAX_LINEAGE = 24;

const isoDate = z.iso.datetime({ offset: true });
const tokenId = z.string().refine(isTokenId, { error: (issue) => tokenIdProblem(issue.input) });

export const stateRecordSchema = z.strictObject({
  version: z.literal(STATE_VERSION),
  name: z.string().min(1),
  /** The id to retrieve next; it changes on every regeneration. */
  currentId: tokenId,
  /** The current token's expiry as last seen; null: never expires. */
  expiresAt: isoDate.nullable(),
  /** The policy id this lineage started from. */
  adoptedId: tokenId,
  adoptedAt: isoDate,
  lastRotatedAt: isoDate.nullable(),
  /** Failed rotations in a row; scheduled checks back off while it is above 0. */
  consecutiveFailures: z.number().int().nonnegative().default(0),
  lastFailure: z.strictObject({ at: isoDate, code: z.string(), message: z.string() }).nullable().default(null),
  /**
   * The service's clock minus ours when this record was last written, from its `Date` headers:
   * `status` reads it without the network.
   */
  serviceClock: z.strictObject({ offsetMs: z.number().int(), measuredAt: isoDate }).nullable().default(null),
  /**
   * Per sink (by target), the fingerprint of the secret it was given or found holding: what every
   * check compares the sink with. Absent in records written before fingerprints: the first check
   * then adopts what the sinks hold.
   */
  sinks: z
    .record(z.string(), z.strictObject({ fingerprint: z.string().min(1), at: isoDate, how: z.enum(['delivered', 'adopted']) }))
    .optional(),
  /**
   * The current token's secret, sealed with the state key and bound to the name and current id
   * (plain in a 0600 file when no key is set): a sink that lost it is given it again, with no new
   * token. `rotated` by us, or `adopted` from what the sinks held. Absent in records from before
   * the state held it, and for a name whose current secret is not known.
   */
  secret: z
    .strictObject({
      value: storedSecretSchema,
      how: z.enum(['rotated', 'adopted']),
      /** The rotation that made it, as the sinks know it: a redelivery writes the same metadata. */
      rotationId: z.string().min(1),
      at: isoDate,
    })
    .optional(),
  /** The whole record authenticated by the state key (`state/authenticated-state.ts`); absent without a key. */
  mac: documentMacSchema.optional(),
  /** Earlier ids, newest first. */
  lineage: z.array(
    z.strictObject({
      id: tokenId,
      replacedAt: isoDate,
      /** When the replaced token stops (stopped) working. */
      expiresAt: isoDate.nullable(),
    }),
  ),
});

export type StateRecord = z.output<typeof stateRecordSchema>;
