import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { variableNameSchema } from '../../common/reference.js';
import { strictObject } from '../../common/strict-object.js';
import type { ReloadParseResult } from '../reload.js';

/** The URL comes from the environment, never the policy: a hook's URL often carries its own secret. */
export interface WebhookReloadConfig {
  type: 'webhook';
  urlFrom: string;
  /**
   * Signs each attempt, its time and its body, with HMAC-SHA256 under this variable's value, so the
   * receiver knows it is us and now (see `http/webhook-signature.ts`).
   */
  secretFrom?: string;
}

const schema = strictObject({
  type: z.literal('webhook'),
  urlFrom: variableNameSchema,
  secretFrom: variableNameSchema.optional(),
});

export function parseWebhookConfig(raw: unknown): ReloadParseResult<WebhookReloadConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  const { urlFrom, secretFrom } = parsed.data;
  return { ok: true, config: { type: 'webhook', urlFrom, ...(secretFrom ? { secretFrom } : {}) } };
}
