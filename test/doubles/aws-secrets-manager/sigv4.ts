import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

import { AwsError } from './aws-error.js';

/** Credentials the double knows: what signs a request, and whose it is. */
export interface KnownCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS, Pod Identity) come with a session token that must be sent and signed. */
  sessionToken?: string;
  /** The principal, for AccessDenied messages: `arn:aws:iam::123456789012:user/ci`. */
  principal: string;
}

export interface SignedRequest {
  method: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{8})T\d{6}Z$/;
/** How far a request's X-Amz-Date may be from the server's clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants it: everything but unreserved characters. */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The canonical URI of a service other than S3: each segment normalised, then encoded twice. */
function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    if (segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalised = `/${segments.join('/')}`;
  const once = normalised
    .split('/')
    .map((s) => encode(decodeURIComponent(s)))
    .join('/');
  return once.split('/').map(encode).join('/');
}

function canonicalQuery(query: string): string {
  if (!query) return '';
  return query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [key = '', value = ''] = pair.split('=');
      return [encode(decodeURIComponent(key.replace(/\+/g, ' '))), encode(decodeURIComponent(value.replace(/\+/g, ' ')))] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

/**
 * Checks a request's Signature Version 4 the way AWS does: the Authorization header's shape, the
 * credential scope (date, region, service), the clock, the access key, the session token, and the
 * signature itself, recomputed with the secret key. Answers the credentials that signed it, or
 * throws the AwsError AWS would answer.
 */
export function verifySignature(
  request: SignedRequest,
  expect: { region: string; service: string; now: Date; lookup(accessKeyId: string): KnownCredentials | undefined },
): KnownCredentials {
  const authorization = headerValue(request.headers, 'authorization');
  if (!authorization) throw new AwsError('MissingAuthenticationTokenException', 'Missing Authentication Token', 403);
  const parsed = AUTHORIZATION.exec(authorization);
  if (!parsed) {
    throw new AwsError(
      'IncompleteSignatureException',
      `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters, and the ${ALGORITHM} algorithm.`,
    );
  }
  const [, credential = '', signedHeaderList = '', signature = ''] = parsed;
  const [accessKeyId = '', date = '', region = '', service = '', terminator = '', ...rest] = credential.split('/');
  if (rest.length > 0 || terminator !== 'aws4_request' || !/^\d{8}$/.test(date)) {
    throw new AwsError(
      'IncompleteSignatureException',
      `Credential should be scoped correctly: ${credential.split('/').slice(1).join('/')}`,
    );
  }
  const amzDate = headerValue(request.headers, 'x-amz-date');
  const dated = amzDate ? AMZ_DATE.exec(amzDate) : null;
  if (!amzDate || !dated)
    throw new AwsError('IncompleteSignatureException', 'Authorization header requires existence of either a X-Amz-Date or a Date header.');
  if (dated[1] !== date)
    throw new AwsError(
      'InvalidSignatureException',
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${date}' != '${dated[1]}'`,
    );
  if (region !== expect.region)
    throw new AwsError('InvalidSignatureException', `Credential should be scoped to a valid region, not '${region}'.`);
  if (service !== expect.service)
    throw new AwsError('InvalidSignatureException', `Credential should be scoped to correct service: '${expect.service}'.`);
  const signedAt = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  if (Math.abs(expect.now.getTime() - signedAt) > MAX_SKEW_MS) {
    throw new AwsError(
      'InvalidSignatureException',
      `Signature expired: ${amzDate} is now earlier than the allowed window around ${expect.now.toISOString()}`,
    );
  }
  const signedHeaders = signedHeaderList.split(';');
  if (!signedHeaders.includes('host'))
    throw new AwsError('InvalidSignatureException', "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  if (!signedHeaders.includes('x-amz-date'))
    throw new AwsError('InvalidSignatureException', "'X-Amz-Date' must be a 'SignedHeader' in the AWS Authorization.");
  if ([...signedHeaders].sort().join(';') !== signedHeaderList)
    throw new AwsError('InvalidSignatureException', 'SignedHeaders must be sorted.');

  const known = expect.lookup(accessKeyId);
  if (!known) throw new AwsError('UnrecognizedClientException', 'The security token included in the request is invalid.');
  const sessionToken = headerValue(request.headers, 'x-amz-security-token');
  if (known.sessionToken !== undefined) {
    if (sessionToken !== known.sessionToken)
      throw new AwsError('UnrecognizedClientException', 'The security token included in the request is invalid.');
    if (!signedHeaders.includes('x-amz-security-token'))
      throw new AwsError('InvalidSignatureException', "'X-Amz-Security-Token' must be a 'SignedHeader'.");
  } else if (sessionToken !== undefined) {
    throw new AwsError('UnrecognizedClientException', 'The security token included in the request is invalid.');
  }

  const [path = '/', query = ''] = request.url.split('?', 2);
  const canonicalHeaders = signedHeaders
    .map((name) => `${name}:${(headerValue(request.headers, name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const payloadHash = sha256(request.body);
  const claimedHash = headerValue(request.headers, 'x-amz-content-sha256');
  if (claimedHash !== undefined && claimedHash !== payloadHash) {
    throw new AwsError(
      'InvalidSignatureException',
      'The provided x-amz-content-sha256 header does not match the computed hash of the payload.',
    );
  }
  const canonicalRequest = [
    request.method,
    canonicalUri(path),
    canonicalQuery(query),
    canonicalHeaders,
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${known.secretAccessKey}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new AwsError(
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
  }
  return known;
}
