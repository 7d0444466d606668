import { HTTPError } from 'got';

import { followSameOriginOnly, isRedirect } from '../../http/redirect-policy.js';
import { webhookHttp } from '../../http/webhook-http.js';
import { signedWith } from '../../http/webhook-signature.js';
import type { ReloadOutcome } from '../../rotation/outcome.js';
import type { Reloader, ReloadOpenContext } from '../reload.js';
import type { WebhookReloadConfig } from './webhook-config.js';

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
        headers: { 'content-type': 'application/json' },
        // With a key, each attempt carries its time and a signature over that time and the body.
        ...(key ? signedWith(key, context.clock) : {}),
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
