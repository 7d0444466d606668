import * as z from 'zod';

import { strictObject } from '../common/strict-object.js';

export const NOTIFICATION_EVENTS = ['failure', 'orphan', 'drift', 'verify_failed', 'success'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/**
 * A webhook target. The URL is read from an environment variable (or its `_FILE`), never written
 * in the policy: a Slack webhook URL is itself a secret.
 */
export const notificationSchema = strictObject({
  type: z.enum(['webhook', 'slack']),
  urlFrom: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be the name of an environment variable holding the URL, such as ROTATOR_SLACK_WEBHOOK'),
  events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).default(['failure', 'orphan', 'drift', 'verify_failed']),
});

export type NotificationConfig = z.output<typeof notificationSchema>;
