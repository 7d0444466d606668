import { createHmac } from 'node:crypto';

import { HTTPError } from 'got';

import { followSameOriginOnly, isRedirect } from '../../http/redirect-policy.js';
import { webhookHttp } from '../../http/webhook-http.js';
import type { Reloader, ReloadOpenContext, ReloadOutcome } from '../reload.js';
import type { WebhookReloadConfig } from './webhook-config.js';

/** `sha256=<hex>` of the exact body bytes, as GitHub signs its webhooks: receivers have code for it. */
export const SIGNATURE_HEADER = 'x-token-rotator-signature-256';

export function signature(body: string, key: string): string {
  return `sha256=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`;
}

export function webhookReloader(context: ReloadOpenContext): Reloader<WebhookReloadConfig> {
  const http = webhookHttp({ timeoutMs: 10_000 });

  async function post(config: WebhookReloadConfig, body: string, signal: AbortSignal | undefined): Promise<ReloadOutcome> {
    const target = `webhook ${config.urlFrom}`;
    const url = context.reference(config.urlFrom);
    if (!url) return { target, result: 'failed', message: `${config.urlFrom} is not set` };
    const key = config.secretFrom ? context.reference(config.secretFrom) : undefined;
    if (config.secretFrom && !key) return { target, result: 'failed', message: `${config.secretFrom} is not set` };
    try {
      const response = await http.post(url.reveal(), {
        body,
        headers: { 'content-type': 'application/json', ...(key ? { [SIGNATURE_HEADER]: signature(body, key.reveal()) } : {}) },
        followRedirect: followSameOriginOnly(url.reveal()),
        ...(signal ? { signal } : {}),
      });
      if (isRedirect(response.statusCode)) {
        return {
          target,
          result: 'failed',
          message: `answered a redirect (${response.statusCode}) to another origin, which is never followed`,
        };
      }
      return { target, result: 'notified' };
    } catch (error) {
      if (error instanceof HTTPError) return { target, result: 'failed', message: `answered ${error.response.statusCode}` };
      // got's message names the URL, which may carry a secret: only the code is kept.
      const code = (error as { code?: string }).code ?? 'ERR_UNKNOWN';
      return { target, result: 'failed', message: `not delivered (${code})` };
    }
  }

  return {
    async reload(config, token, run) {
      const body = JSON.stringify({
        event: 'rotated',
        token: token.name,
        id: token.id,
        expiresAt: token.expiresAt,
        rotationId: token.rotationId,
        rotatedAt: token.rotatedAt,
      });
      return [await run.once(`webhook ${config.urlFrom} ${token.name}`, () => post(config, body, run.signal))];
    },
  };
}
