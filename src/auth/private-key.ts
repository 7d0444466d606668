import { createPrivateKey } from 'node:crypto';

import { type CryptoKey, importJWK, importPKCS8, type JWK } from 'jose';

import { AuthError } from '../errors.js';
import type { Secret } from '../secret.js';

/** The signing algorithm implied by a key, so the operator does not have to name it. */
function algorithmOf(pem: string): string {
  const key = createPrivateKey(pem);
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'rsa-pss':
      return 'PS256';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return 'ES256';
      if (curve === 'secp384r1') return 'ES384';
      if (curve === 'secp521r1') return 'ES512';
      throw new AuthError(`the private key's curve ${curve} is not supported for private_key_jwt`);
    }
    case 'ed25519':
      return 'EdDSA';
    default:
      throw new AuthError(`the private key type ${key.asymmetricKeyType} is not supported for private_key_jwt`);
  }
}

/** A PKCS#8 PEM or a private JWK, as a non-extractable CryptoKey for openid-client. */
export async function importClientPrivateKey(text: Secret): Promise<{ key: CryptoKey; kid?: string }> {
  const value = text.reveal().trim();
  try {
    if (value.startsWith('{')) {
      const jwk = JSON.parse(value) as JWK;
      const alg = jwk.alg ?? (jwk.kty === 'RSA' ? 'RS256' : jwk.kty === 'OKP' ? 'EdDSA' : jwk.crv === 'P-384' ? 'ES384' : 'ES256');
      const key = (await importJWK(jwk, alg)) as CryptoKey;
      return jwk.kid ? { key, kid: jwk.kid } : { key };
    }
    const key = await importPKCS8(value, algorithmOf(value));
    return { key };
  } catch (error) {
    if (error instanceof AuthError) throw error;
    // The parser's message could quote the key; say only what kind of problem it is.
    throw new AuthError('ROTATOR_OAUTH_PRIVATE_KEY is not a PKCS#8 PEM private key or a private JWK');
  }
}
