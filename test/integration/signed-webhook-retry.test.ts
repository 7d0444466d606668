import { afterEach, describe, expect, it } from 'vitest';

import { fixedClock } from '../../src/clock.js';
import { createLogger } from '../../src/log/logger.js';
import { webhookReloader } from '../../src/reload/webhook/webhook-reloader.js';
import { Secret } from '../../src/secret.js';
import { startSignedWebhookReceiver } from '../helpers/signed-webhook-receiver.js';

const KEY = 'retry-hmac-key-canary-51c9';
const TEN_MINUTES = 600_000;

describe('a signed webhook retried', () => {
  let receiver: Awaited<ReturnType<typeof startSignedWebhookReceiver>> | undefined;
  afterEach(() => receiver?.close());

  it('signs each attempt with the time it is sent, so a retry minutes later is not refused as stale', async () => {
    const clock = fixedClock('2026-11-22T20:00:00Z');
    const sentFirst = clock.now().getTime() / 1000;
    // The receiver runs on the rotator's clock. Its first answer is a 503, and ten minutes pass
    // before the retry: had the retry kept the first attempt's signature, it would be refused.
    receiver = await startSignedWebhookReceiver(KEY, {
      nowSeconds: () => Math.floor(clock.now().getTime() / 1000),
      answer: () => {
        if (receiver!.calls.length > 1) return 204;
        clock.advance(TEN_MINUTES);
        return 503;
      },
    });
    const reloader = webhookReloader({
      logger: createLogger({ level: 'silent' }),
      env: {},
      clock,
      reference: (name) => new Secret(name === 'HOOK_URL' ? `${receiver!.url}/reload` : KEY),
    });
    const outcomes = await reloader.reload(
      { type: 'webhook', urlFrom: 'HOOK_URL', secretFrom: 'HOOK_KEY' },
      { name: 'ingest', id: 'ingest-002', expiresAt: null, rotationId: 'r-1', rotatedAt: '2026-11-22T20:00:00.000Z' },
      { once: (_key, action) => action() },
    );

    expect(outcomes).toEqual([{ target: 'webhook HOOK_URL', result: 'notified' }]);
    expect(receiver.calls.map((c) => [Number(c.headers['x-token-rotator-timestamp']), c.accepted])).toEqual([
      [sentFirst, true],
      [sentFirst + TEN_MINUTES / 1000, true],
    ]);
    // The same body both times: only the time and its signature changed.
    expect(receiver.calls[1]!.body).toEqual(receiver.calls[0]!.body);
    expect(receiver.calls[1]!.headers['x-token-rotator-signature']).not.toBe(receiver.calls[0]!.headers['x-token-rotator-signature']);
  });
});
