/**
 * Small helpers around our errors: which network failures are a shared dependency's, how a URL is
 * named in a message, and which code an output gives a failure.
 */
import { type DependencyFailureKind, ERROR_CLASSES, type ErrorCode, type RotatorErrorCode, UNEXPECTED_ERROR_CODE } from './errors.js';

/** Network error codes by what they mean for an operator; anything else is not a shared-dependency class. */
const NETWORK_KINDS: Record<string, DependencyFailureKind> = {
  ECONNREFUSED: 'connection-refused',
  ENOTFOUND: 'unknown-host',
  EAI_AGAIN: 'unknown-host',
  ENETUNREACH: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
  CERT_HAS_EXPIRED: 'tls',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls',
  ERR_SSL_WRONG_VERSION_NUMBER: 'tls',
};

export function networkFailureKind(code: string | undefined): DependencyFailureKind | undefined {
  return code === undefined ? undefined : NETWORK_KINDS[code];
}

/** The origin of a URL, for messages: a path or query may hold a secret. */
export function originOf(url: string | URL | undefined): string {
  if (url === undefined) return 'an unknown address';
  try {
    return new URL(url).origin;
  } catch {
    return 'an unreadable address';
  }
}

/**
 * The code an output gives a failure: its own when it is one of ours, else `ERR_UNEXPECTED` (a file
 * system's `EIO`, a library's code), so that outputs carry only the codes their schema lists. The
 * foreign code stays in the message (`EIO: i/o error, write`).
 */
export function outputCode(code: unknown): ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CLASSES, code) ? (code as RotatorErrorCode) : UNEXPECTED_ERROR_CODE;
}
