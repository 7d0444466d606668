import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, rootCertificates, setDefaultCACertificates } from 'node:tls';

import { type SelfSignedCertificate, selfSignedCertificate } from 'token-rotator-kubernetes-double/self-signed-certificate';

/*
 * How a process comes to trust the double's TLS certificate, as an operator's would trust a private
 * CA. This module must not load @grpc/grpc-js: it runs before it does.
 */

let shared: SelfSignedCertificate | undefined;

/** One certificate for every double a process starts: grpc-js reads its trusted roots only once. */
export function doubleCertificate(): SelfSignedCertificate {
  shared ??= selfSignedCertificate(['127.0.0.1', '::1'], ['localhost'], 'gcp-secret-manager-double');
  return shared;
}

const ROOTS = 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH';

/**
 * Makes this process trust the double's certificate, and returns the undo. gRPC (grpc-js, under
 * google-gax) trusts Node's default CAs, where NODE_EXTRA_CA_CERTS puts a private CA, unless
 * GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names a bundle, which it then reads instead, once, and which it
 * names at load time. So a test calls this from `vi.hoisted`, before any import loads grpc-js: the
 * variable names a bundle holding the usual roots and the double's CA, and Node's default CAs (for
 * fetch, https) get the CA too.
 */
export function trustDoubleCertificate(): () => void {
  const { cert } = doubleCertificate();
  const before = { roots: process.env[ROOTS], cas: getCACertificates('default') };
  const usual = before.roots && existsSync(before.roots) ? readFileSync(before.roots, 'utf8') : rootCertificates.join('\n');
  const bundle = join(tmpdir(), `token-rotator-gcp-double-roots-${process.pid}.pem`);
  writeFileSync(bundle, `${usual}\n${cert}`);
  process.env[ROOTS] = bundle;
  setDefaultCACertificates([...before.cas, cert]);
  return () => {
    setDefaultCACertificates(before.cas);
    if (before.roots === undefined) delete process.env[ROOTS];
    else process.env[ROOTS] = before.roots;
    rmSync(bundle, { force: true });
  };
}
