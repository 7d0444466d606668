import { Writable } from 'node:stream';
import { inspect } from 'node:util';

import { describe, expect, it } from 'vitest';

import { ApiError } from '../../src/errors.js';
import { remoteText } from '../../src/http/remote-text.js';
import { createLogger } from '../../src/log/logger.js';
import { errorSummary } from '../../src/rotation/outcome.js';
import { scrubSecrets, Secret } from '../../src/secret.js';
import { expectNoLeak } from '../helpers/leaks.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'trace', destination: stream }) };
}

describe('Secret', () => {
  const secret = new Secret('xaat-canary-secret-0100');

  it.each([
    ['String()', () => String(secret)],
    ['template literal', () => `${secret}`],
    ['JSON.stringify', () => JSON.stringify({ secret })],
    ['util.inspect', () => inspect({ nested: { secret } })],
  ])('prints as [REDACTED] through %s', (_how, print) => {
    const text = print();
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain('xaat-canary-secret-0100');
  });

  it('gives its value only to reveal()', () => {
    expect(secret.reveal()).toBe('xaat-canary-secret-0100');
  });
});

describe('logger', () => {
  it('censors secret-named fields wherever they are', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        token: 'xaat-canary-0101',
        headers: { authorization: 'Bearer canary-0102' },
        nested: { clientSecret: 'canary-0103', secret: 'canary-0104' },
      },
      'fields',
    );
    expectNoLeak({ log: lines.join('') }, ['xaat-canary-0101', 'canary-0102', 'canary-0103', 'canary-0104']);
    expect(lines.join('')).toContain('[REDACTED]');
  });

  it('scrubs a known secret value that reached a message or an error by some other path', () => {
    const secret = new Secret('xaat-canary-in-a-message-0105');
    const { lines, logger } = capture();
    logger.error({ err: new ApiError(`oops ${secret.reveal()}`, { op: 'retrieve' }) }, `also here: ${secret.reveal()}`);
    expectNoLeak({ log: lines.join('') }, ['xaat-canary-in-a-message-0105']);
  });

  it('keeps the token name, which is not a secret', () => {
    const { lines, logger } = capture();
    logger.child({ tokenName: 'ingest-prod' }).info('checked');
    expect(JSON.parse(lines[0]!)).toMatchObject({ tokenName: 'ingest-prod', msg: 'checked' });
  });
});

describe('a secret with characters JSON escapes', () => {
  it.each([
    ['a quote', 'canary"quoted"secret-0106'],
    ['a backslash', 'canary\\back\\slash-0107'],
    ['a control character', 'canary\tcontrol-secret-0108'],
  ])('is scrubbed from a log line, where it appears escaped (%s)', (_what, value) => {
    const secret = new Secret(value);
    const { lines, logger } = capture();
    logger.error({ detail: `the peer said ${secret.reveal()}` }, 'a forgotten path');
    const line = lines.join('');
    expect(line).toContain('[REDACTED]');
    expectNoLeak({ log: line }, [value, JSON.stringify(value).slice(1, -1)]);
  });
});

describe('scrubSecrets', () => {
  it('leaves short values alone so that ordinary words are not mangled', () => {
    new Secret('abc');
    expect(scrubSecrets('abc is fine')).toBe('abc is fine');
  });

  it('finds every one of many known values anywhere in a line, a longer one containing a shorter one whole', () => {
    const many = Array.from({ length: 300 }, (_, i) => new Secret(`xaat-many-${i}-${'q'.repeat(i % 7)}`).reveal());
    const outer = new Secret('prefix-xaat-many-7-qqqqqqq-suffix').reveal();
    const line = `start ${many[0]} middle ${many[299]}|${many[150]}${outer} end ${many[42]}`;
    const scrubbed = scrubSecrets(line);
    expect(scrubbed).toBe('start [REDACTED] middle [REDACTED]|[REDACTED][REDACTED] end [REDACTED]');
    for (const value of many) expect(scrubSecrets(`a ${value}`)).toBe('a [REDACTED]');
  });

  it('finds values of any characters at every position of a line (a thousand values, seeded)', () => {
    let seed = 20261122;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    // Few distinct characters, so that many windows share a hash bucket or almost match a value.
    const alphabet = ['a', 'b', 'é', '\u{1F511}', '"', '\\', '\n', ' '];
    const text = (length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    // At least 8 characters besides whitespace, which scrubbing reads through (a shorter value is not scrubbed).
    const value = (): string => {
      const drawn = text(8 + Math.floor(random() * 12));
      return drawn.replace(/\s/g, '').length >= 8 ? drawn : value();
    };
    const values = Array.from({ length: 1000 }, () => new Secret(value()).reveal());
    for (let round = 0; round < 200; round++) {
      const picked = Array.from({ length: 3 }, () => values[Math.floor(random() * values.length)]!);
      const line = `${text(Math.floor(random() * 40))}${picked[0]}${text(5)}${picked[1]}${picked[2]}${text(Math.floor(random() * 40))}`;
      const scrubbed = scrubSecrets(line);
      for (const value of picked) expect(scrubbed.includes(value), `round ${round}`).toBe(false);
      // One mark a value, and one more for each double quote in it: a mark leaves quotes, which may end a JSON string.
      const quotes = picked.join('').split('"').length - 1;
      expect(scrubbed.length).toBeLessThan(line.length + (3 + quotes) * '[REDACTED]'.length);
    }
  });
});

describe('a known secret a program or a peer printed formatted', () => {
  const value = 'xaat-5f0c2d7e-93b1-4a6e-b2c4-8d1e0f7a9c35';

  it.each([
    ['wrapped (fold -w 8)', value.match(/.{1,8}/g)!.join('\n')],
    ['wrapped with CRLF and spaces', value.match(/.{1,5}/g)!.join(' \r\n')],
    ['in base64', Buffer.from(value).toString('base64')],
    [
      'in base64 wrapped (base64 -w 12)',
      Buffer.from(value)
        .toString('base64')
        .match(/.{1,12}/g)!
        .join('\n'),
    ],
    ['in hex (od -An -tx1)', [...Buffer.from(value)].map((b) => b.toString(16).padStart(2, '0')).join(' ')],
    ['cut to its first 12 characters (head -c 12)', value.slice(0, 12)],
    ['cut from its middle (cut -c 14-29)', value.slice(13, 29)],
    ['cut to its last 10 characters (tail -c 10)', value.slice(-10)],
  ])('is scrubbed %s', (_how, printed) => {
    new Secret(value); // known now: other tests fill the bounded list
    expect(scrubSecrets(`the program said: ${printed} (exit 1)`)).toBe('the program said: [REDACTED] (exit 1)');
    expect(remoteText(`the peer said: ${printed}`)).toBe('the peer said: [REDACTED]');
  });
});

describe('failure text on its way to outcomes, tables, state and the journal', () => {
  it('is scrubbed of every known secret value, whichever peer echoed it', () => {
    const echoed = new Secret('plain-words-secret-not-token-shaped').reveal();
    const summary = errorSummary(new Error(`the sink program said: ${echoed} is wrong`));
    expect(summary.message).toBe('the sink program said: [REDACTED] is wrong');
  });
});

describe('the bounded list of known secrets', () => {
  it('keeps a credential that is still in use, however many newer secrets come after it', () => {
    const clientSecret = new Secret('client-secret-read-once-at-start');
    for (let i = 0; i < 999; i++) new Secret(`later-secret-${i}-padding`);
    clientSecret.reveal(); // an access token is fetched with it
    for (let i = 0; i < 500; i++) new Secret(`even-later-secret-${i}-padding`);
    expect(scrubSecrets('client-secret-read-once-at-start')).toBe('[REDACTED]');
  });
});
