import { execFileSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { looksLikeKeyMaterial } from '../../src/scrub/secret-forms.js';
import { SecretMatcher } from '../../src/scrub/secret-matcher.js';
import { expectNoFragment } from '../helpers/leaks.js';
import { seededRandom } from '../helpers/seeded-random.js';

const random = seededRandom(20);
const hex = (length: number) => Array.from({ length }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
const base64url = (length: number) =>
  Array.from({ length }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[Math.floor(random() * 64)]).join('');
/** The token service's shape: a prefix and a UUID. */
const token = () => `xaat-${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
const JWT_HEADER = 'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9';
const jwt = () => `${JWT_HEADER}.${base64url(300)}.${base64url(86)}`;

/** The program, run for real, with `input` on its stdin. */
const printed = (program: string, args: string[], input: string) => execFileSync(program, args, { input, encoding: 'utf8' });

function matcherKnowing(...secrets: string[]): SecretMatcher {
  const matcher = new SecretMatcher();
  for (const secret of secrets) matcher.add(secret);
  return matcher;
}

describe('a secret a program printed', () => {
  const secret = token();
  const matcher = matcherKnowing(secret, token(), jwt());

  it('is masked however it was broken over lines or spaces: fold at every width, CRLF, tabs, runs of spaces', () => {
    const shapes: Record<string, string> = {};
    for (let width = 1; width <= secret.length; width++) shapes[`fold -w ${width}`] = printed('fold', ['-w', String(width)], secret);
    shapes['CRLF'] = secret.match(/.{1,6}/g)!.join('\r\n');
    shapes['tabs and spaces'] = secret.match(/.{1,5}/g)!.join(' \t  ');
    for (const [how, text] of Object.entries(shapes))
      expect(matcher.scrub(`it said: ${text} (exit 1)`), how).toBe('it said: [REDACTED] (exit 1)');
  });

  it('is masked in a JSON document that escapes its line breaks, which stays a JSON document', () => {
    const document = JSON.stringify({ msg: 'the program failed', stderr: `error:\n${printed('fold', ['-w', '8'], secret)}\ndone` });
    const scrubbed = matcher.scrub(document);
    expect(JSON.parse(scrubbed)).toEqual({ msg: 'the program failed', stderr: 'error:\n[REDACTED]\ndone' });
  });

  it('is masked in base64 and hex, wrapped or not, alone or inside the encoding of a longer text', () => {
    const json = (pad: string) => `{"name":"ingest${pad}","token":"${secret}","rotatedAt":"2026-11-22T12:00:00.000Z"}\n`;
    const outputs: Record<string, string> = {
      'base64 -w 0': printed('base64', ['-w', '0'], secret),
      'base64 -w 12': printed('base64', ['-w', '12'], secret),
      'od -An -tx1': printed('od', ['-An', '-tx1'], secret),
    };
    // Each of the three byte alignments the secret can have inside the text that is encoded.
    for (const pad of ['', 'x', 'xy']) outputs[`base64 -w 76 of JSON ${pad}`] = printed('base64', ['-w', '76'], json(pad));
    for (const pad of ['', 'x', 'xy']) outputs[`base64 -w 0 of JSON ${pad}`] = printed('base64', ['-w', '0'], json(pad));
    outputs['od of JSON'] = printed('od', ['-An', '-tx1'], json(''));
    for (const [how, text] of Object.entries(outputs)) {
      const scrubbed = matcher.scrub(text);
      expect(scrubbed, how).toContain('[REDACTED]');
      expectNoFragment({ [how]: scrubbed }, [secret]);
    }
  });

  it('is masked in any piece of 8 characters or more, however cut (head -c, cut -c, tail -c), and not in a shorter one', () => {
    const cuts: Record<string, string> = {
      'head -c 8': printed('head', ['-c', '8'], secret),
      'head -c 20': printed('head', ['-c', '20'], secret),
      'cut -c 14-29': printed('cut', ['-c', '14-29'], secret),
      'tail -c 10': printed('tail', ['-c', '10'], secret),
    };
    for (let from = 0; from < secret.length; from++) {
      for (let to = from + 8; to <= secret.length; to++) cuts[`${from}-${to}`] = secret.slice(from, to);
    }
    for (const [how, piece] of Object.entries(cuts)) expect(matcher.scrub(`said "${piece.trim()}"`), how).toBe('said "[REDACTED]"');
    for (let from = 0; from + 7 <= secret.length; from++) {
      const short = secret.slice(from, from + 7);
      expect(matcher.scrub(`said "${short}"`)).toBe(`said "${short}"`);
    }
  });

  it('is masked as one mark when a program printed it whole and in pieces', () => {
    const text = `${secret}\n${printed('fold', ['-w', '8'], secret)}\n${secret.slice(3, 30)}`;
    expect(matcher.scrub(`x ${text} y`)).toBe('x [REDACTED] y');
  });
});

describe('ordinary text', () => {
  it('is left readable with a thousand secrets known: paths, error words, URLs, times and ids', () => {
    const secrets = Array.from({ length: 1000 }, (_, i) => [token, jwt, () => base64url(32), () => hex(40)][i % 4]!());
    const matcher = matcherKnowing(
      ...secrets,
      // Credentials that are not key material: only whole is a leak.
      'token-rotator-preflight',
      'http://127.0.0.1:41234/hook',
      'correct horse battery staple',
      // One a person chose, with a word in it.
      'MyPassword2024!',
    );
    const messages = [
      'token-rotator: cannot write file /var/lib/token-rotator/state/tokens/ingest-prod.json: EACCES: permission denied',
      'GET http://127.0.0.1:41234/v1/tokens/0a1b2c3d4e5f failed: connect ECONNREFUSED 127.0.0.1:41234',
      'https://vault.example.com:8200/v1/secret/data/apps/ingest: 403 permission denied',
      'write through exec /usr/local/bin/push-token --dest /etc/app/token failed: the program exited with 1: No such file or directory',
      'rotated, but not yet delivered to kubernetes-secret apps/ingest-token; the next run delivers it without regenerating',
      'the token expires at 2026-12-25T17:27:53.123Z; rotation 1c269096-1f1f-427d-95a7-38a59dcb303b; Password reset required',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/ingest-AbCdEf: ResourceNotFoundException',
      'correct horse, battery staple and a token-rotator preflight check',
      'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    ];
    for (const message of messages) expect(matcher.scrub(message)).toBe(message);
    // Whole, each is masked, also broken over lines.
    expect(matcher.scrub('at http://127.0.0.1:41234/hook now')).toBe('at [REDACTED] now');
    expect(matcher.scrub('correct horse\nbattery staple')).toBe('[REDACTED]');
    expect(matcher.scrub('token-rotator-\npreflight')).toBe('[REDACTED]');
    expect(matcher.scrub('it was MyPassword2024')).toBe('it was [REDACTED]');
  });

  it('tells key material from words, numbers, hosts and paths', () => {
    for (const key of [
      token(),
      jwt(),
      base64url(24),
      hex(40),
      'hvs.CAESIJlWcBdNuA0TjUA8GMbF2Cxz',
      'xaat-22550445-a0f9-4313-aeed-b9f4de6aa9d2',
    ]) {
      expect(looksLikeKeyMaterial(key), key).toBe(true);
    }
    for (const words of [
      'token-rotator-preflight',
      'http://127.0.0.1:41234/hook',
      'correct horse battery staple',
      '/var/lib/token-rotator',
    ]) {
      expect(looksLikeKeyMaterial(words), words).toBe(false);
    }
  });
});

describe('the set of known secrets', () => {
  it('forgets a removed secret, and keeps masking one that shares pieces with it', () => {
    const first = jwt();
    const second = jwt();
    const matcher = matcherKnowing(first, second);
    matcher.delete(first);
    expect(matcher.scrub(first.slice(-40))).toBe(first.slice(-40));
    // What the two shared (the JWT header) is structure, not secret: the rest is masked.
    const scrubbed = matcher.scrub(`a ${second} b`);
    expect(scrubbed).toMatch(/^a [\w.-]{0,37}\[REDACTED\] b$/);
    expectNoFragment({ scrubbed }, [second.slice(JWT_HEADER.length)]);
    expect(matcher.scrub(second.slice(-40))).toBe('[REDACTED]');
  });

  it('masks each of many secrets that share a prefix, and the prefix of none that only shares it', () => {
    const tokens = Array.from({ length: 2000 }, token);
    const matcher = matcherKnowing(...tokens);
    for (const t of tokens) expect(matcher.scrub(`(${t.slice(2, 30)})`)).toBe('([REDACTED])');
    expect(matcher.scrub('xaat-')).toBe('xaat-');
  });
});

describe('scrubbing', () => {
  it('keeps a JSON document valid where it masks, whatever the secrets hold (quotes, backslashes, control characters, emoji)', () => {
    const alphabet = ['a', 'B', '7', '"', '\\', '\n', '\t', '\u{1F511}', 'é', '/'];
    const drawn = (length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const secrets = Array.from({ length: 200 }, () => `${drawn(6)}${hex(6)}${drawn(6)}`);
    const matcher = matcherKnowing(...secrets);
    for (let round = 0; round < 300; round++) {
      const secret = secrets[Math.floor(random() * secrets.length)]!;
      const from = Math.floor(random() * 6);
      const document = JSON.stringify({ before: drawn(5), said: `${drawn(3)}${secret.slice(from)}${drawn(3)}`, after: [secret] });
      const scrubbed = matcher.scrub(document);
      expect(() => JSON.parse(scrubbed), `round ${round}: ${JSON.stringify(secret)} ${document} ${scrubbed}`).not.toThrow();
      expect(scrubbed.includes(JSON.stringify(secret).slice(1, -1)), `round ${round}`).toBe(false);
    }
  });

  // Correctness on texts made to hit shared pieces; how fast is for benchmarks, not a timed test.
  // The generous timeout only stops a matcher that backtracks or compares every secret everywhere.
  it('scrubs 1 MiB texts made to hit shared pieces, a token prefix and a JWT header over and over', { timeout: 120_000 }, () => {
    const secrets = Array.from({ length: 1000 }, (_, i) => [token, jwt, () => base64url(32), () => hex(40)][i % 4]!());
    const matcher = matcherKnowing(...secrets);
    const MiB = 1 << 20;
    const texts = {
      'base64 noise': Buffer.from(Array.from({ length: (MiB * 3) / 4 }, () => Math.floor(random() * 256))).toString('base64'),
      'log lines': 'cannot write file /var/lib/token-rotator/state/tokens/x.json: ENOENT at 2026-11-25T17:28:50Z\n'.repeat(MiB / 90),
      'a shared JWT header, over and over': `${JWT_HEADER}.`.repeat(MiB / 37),
      'a token prefix, over and over': 'xaat-'.repeat(MiB / 5),
      'one secret, over and over': `${secrets[0]}\n`.repeat(MiB / 42),
      'a folded JWT, over and over': `${secrets[1]!.match(/.{1,3}/g)!.join('\n')}\n`.repeat(MiB / 520),
    };
    for (const [what, text] of Object.entries(texts)) expect(matcher.scrub(text).length, what).toBeGreaterThan(0);
  });
});
