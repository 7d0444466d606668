import type { ReloadType } from '../reload.js';
import { parseWebhookConfig, type WebhookReloadConfig } from './webhook-config.js';

/** A POST to the app (or whatever reloads it) saying which token was rotated: never the secret. */
export const webhookReloadType: ReloadType<WebhookReloadConfig> = {
  type: 'webhook',
  parse: parseWebhookConfig,
  describe: (config) => `webhook ${config.urlFrom}`,
  references: (config) => [
    { path: 'urlFrom', variable: config.urlFrom, url: true },
    ...(config.secretFrom ? [{ path: 'secretFrom', variable: config.secretFrom }] : []),
  ],
  async open(context) {
    const { webhookReloader } = await import('./webhook-reloader.js');
    return webhookReloader(context);
  },
};
