import { createHmac } from 'node:crypto';

import type { BeforeRequestHook } from 'got';

import type { Clock } from '../clock.js';
import type { Secret } from '../secret.js';

/**
 * How the rotator signs what it sends (reload webhooks), scheme `v1`, as Slack and Stripe sign theirs:
 * the HMAC-SHA256, under the shared key, of `v1:<timestamp>:<body>`, where the timestamp is the Unix
 * time in seconds when the request was sent, also given in its own header. A signature over the body
 * alone could be replayed for ever; with the time inside it, a receiver that refuses a timestamp
 * more than a few minutes off its clock refuses a captured request once those minutes have passed,
 * and a timestamp moved forward no longer matches the signature.
 *
 *   X-Token-Rotator-Timestamp: 1767225600
 *   X-Token-Rotator-Signature: v1=<64 hex digits>
 *
 * The version is in the signed text and in the header, so a later scheme can never be mistaken for
 * this one; the timestamp is digits only, so the text splits one way: what follows its second `:`
 * is the body, byte for byte.
 */
export const SIGNATURE_VERSION = 'v1';
export const TIMESTAMP_HEADER = 'x-token-rotator-timestamp';
export const SIGNATURE_HEADER = 'x-token-rotator-signature';

/** The two headers for `body` sent at `at`: pure, for the hook below and for tests that check the scheme. */
export function signatureHeaders(body: string | Uint8Array, key: string, at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const hmac = createHmac('sha256', key).update(`${SIGNATURE_VERSION}:${timestamp}:`).update(body).digest('hex');
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `${SIGNATURE_VERSION}=${hmac}` };
}

/**
 * got options that sign each attempt when it is sent: a retry (got's, after a 503 or a reset) is
 * signed again with the time of that attempt, so a request retried minutes later is not refused as
 * stale, and no two attempts carry a timestamp older than themselves.
 */
export function signedWith(key: Secret, clock: Clock): { hooks: { beforeRequest: BeforeRequestHook[] } } {
  return {
    hooks: {
      beforeRequest: [
        (options) => {
          const { body } = options;
          // A stream could not be signed before it is sent, nor sent again: only text is signed.
          if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw new TypeError('a signed webhook needs a text body');
          Object.assign(options.headers, signatureHeaders(body, key.reveal(), clock.now()));
        },
      ],
    },
  };
}
