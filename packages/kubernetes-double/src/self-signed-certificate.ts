import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIPv6 } from 'node:net';

import { systemClock } from './clock.js';

/*
 * A self-signed certificate for the double's TLS side, built here because node:crypto has no
 * certificate generator and client-go only sends credentials over TLS. It is an ECDSA P-256
 * X.509 v3 certificate, its own CA (kubeconfig's certificate-authority-data), valid for the
 * loopback names, encoded in DER by hand: SEQUENCEs of the few types a certificate needs.
 */

export interface SelfSignedCertificate {
  /** PEM: the certificate, and the CA to trust. */
  cert: string;
  /** PEM, PKCS#8. */
  key: string;
}

const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content]);

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const octets = (content: Buffer) => tlv(0x04, content);
const bits = (content: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), content]));
const TRUE = tlv(0x01, Buffer.from([0xff]));

function integer(value: Buffer): Buffer {
  let v = value;
  while (v.length > 1 && v[0] === 0 && v[1]! < 0x80) v = v.subarray(1);
  if (v[0]! >= 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return tlv(0x02, v);
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime (YYMMDDHHMMSSZ) up to 2049, GeneralizedTime after, as RFC 5280 requires. */
function time(date: Date): Buffer {
  const iso = date.toISOString();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

function ipBytes(ip: string): Buffer {
  if (!isIPv6(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return Buffer.concat(
    groups.map((g) =>
      Buffer.from(
        Number.parseInt(g || '0', 16)
          .toString(16)
          .padStart(4, '0'),
        'hex',
      ),
    ),
  );
}

const extension = (id: string, critical: boolean, value: Buffer) => sequence(oid(id), ...(critical ? [TRUE] : []), octets(value));

/** A certificate for `ips` and `dnsNames`, valid from an hour ago for a year (wall clock: TLS checks it). */
export function selfSignedCertificate(
  ips: string[],
  dnsNames: string[],
  commonName = 'token-rotator-kubernetes-double',
): SelfSignedCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const now = systemClock.now().getTime();
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(commonName))));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const altNames = sequence(...ips.map((ip) => tlv(0x87, ipBytes(ip))), ...dnsNames.map((dns) => tlv(0x82, Buffer.from(dns, 'ascii'))));
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(new Date(now - 3_600_000)), time(new Date(now + 365 * 86_400_000))),
    name,
    spki,
    explicit(
      3,
      sequence(
        extension('2.5.29.15', true, bits(Buffer.from([0x84]), 2)), // keyUsage: digitalSignature, keyCertSign
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.19', true, sequence(TRUE)), // basicConstraints: CA
        extension('2.5.29.14', false, octets(createHash('sha1').update(spki).digest())), // subjectKeyIdentifier
        extension('2.5.29.17', false, altNames),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, bits(signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  return { cert: pem, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
