import { describe, expect, it } from 'vitest';

import { maskTokenLike, MAX_REMOTE_TEXT, remoteText } from '../../src/http/remote-text.js';
import { Secret } from '../../src/secret.js';

/**
 * Text from a peer (a service's error body, an authorization server's error_description, a
 * program's stderr) reaches operators, the state and webhooks. A secret we never held cannot be
 * scrubbed by value, so anything shaped like a token is masked; words an operator needs are kept.
 */
describe('a credential-looking piece of a remote error body', () => {
  it.each([
    // The service's prefixes, also when too short or too plain to look random on their own.
    ['an API token with the service prefix', 'invalid token xaat-abc, try again', 'invalid token [MASKED], try again'],
    ['a personal access token with the service prefix', 'bad xapt-zz', 'bad [MASKED]'],
    ['a prefixed token in capitals', 'bad XAAT-Zz', 'bad [MASKED]'],
    ['a prefixed token that is only its prefix', 'bad xaat- here', 'bad [MASKED] here'],
    ['a prefixed token ends at a double quote', 'token "xaat-abc" refused', 'token "[MASKED]" refused'],
    ['a prefixed token ends at a single quote', "token 'xaat-abc' refused", "token '[MASKED]' refused"],
    ['a prefixed token ends at a backtick', 'token `xaat-abc` refused', 'token `[MASKED]` refused'],
    ['a prefixed token ends at a semicolon', 'token xaat-abc; refused', 'token [MASKED]; refused'],
    ['a prefixed token ends at a closing parenthesis', '(token xaat-abc)', '(token [MASKED])'],
    ['a prefixed token ends at a closing bracket', '[xaat-abc]', '[[MASKED]]'],
    ['a prefixed token ends at a closing brace', '{xaat-abc}', '{[MASKED]}'],
    ['a prefixed token in JSON', '{"token":"xaat-abc"}', '{"token":"[MASKED]"}'],
    // A JWT too short and too plain to look random as a run of characters.
    ['a JWT', 'got eyJhbGci.eyJzdWIi.sig back', 'got [MASKED] back'],
    ['a JWT with an empty signature', 'got eyJhbGci.eyJzdWIi. back', 'got [MASKED] back'],
    ['a JWT inside quotes', 'bearer "eyJhbGci.eyJzdWIi.sig"', 'bearer "[MASKED]"'],
    // Long runs of token alphabet that look random.
    ['a lower-case run with two digits and many letters', 'key abcdefghijklmnopqr12 denied', 'key [MASKED] denied'],
    ['a run of digits with two letters', 'key 123456789012345678ab denied', 'key [MASKED] denied'],
    ['a 32-character run of mixed case without digits', 'key AbcdefghijklmnopqrstuvwxyzAbcdef denied', 'key [MASKED] denied'],
    ['a base64 run with separators', 'key a1b2c3d4+e5f6/g7h8=i9j0 denied', 'key [MASKED] denied'],
    ['a run with the url-safe separators', 'key a1_b2.c3~d4-e5f6g7h8i9 denied', 'key [MASKED] denied'],
  ])('is masked: %s', (_what, text, masked) => {
    expect(maskTokenLike(text)).toBe(masked);
    expect(remoteText(text)).toBe(masked);
  });
});

describe('ordinary words of a remote error body', () => {
  it.each([
    ['a sentence', 'permission denied: the token lacks the ingest capability'],
    ['a word that only starts like a prefix', 'the xaatx-field and axaat-field are not tokens'],
    ['a long lower-case identifier', 'unknown field organization_identifier_reference'],
    ['a long run with one digit', 'unknown field organizationidentifier1'],
    ['a long number with one letter', 'request 1234567890123456789a failed'],
    ['a 31-character run of mixed case', 'unknown AbcdefghijklmnopqrstuvwxyzAbcde'],
    ['a run of capitals only', 'code PERMISSIONDENIEDFORTHISDATASETNAME'],
    ['a run of lower case only, long', 'code permissiondeniedforthisdatasetnameandmore'],
    ['a JWT-like start with too short a part', 'see eyJa.eyJzdWIi.sig'],
    ['a short mixed run', 'error E42x1 at row 7'],
  ])('are kept: %s', (_what, text) => {
    expect(maskTokenLike(text)).toBe(text);
    expect(remoteText(text)).toBe(text);
  });
});

describe('remote text is kept short and on one line', () => {
  it(`keeps ${MAX_REMOTE_TEXT} characters whole`, () => {
    const text = 'a '.repeat(MAX_REMOTE_TEXT / 2 - 1) + 'zz';
    expect(text).toHaveLength(MAX_REMOTE_TEXT);
    expect(remoteText(text)).toBe(text);
  });

  it(`cuts a longer text at ${MAX_REMOTE_TEXT} characters and says so`, () => {
    const text = 'word '.repeat(200);
    const said = remoteText(text);
    expect(said).toBe(`${text.slice(0, MAX_REMOTE_TEXT)}…`);
  });

  it('cuts at the length the caller asks for', () => {
    expect(remoteText('the other token is called ingest-prod', 8)).toBe('the othe…');
    expect(remoteText('12345678', 8)).toBe('12345678');
  });

  it('flattens line breaks and runs of spaces, and trims the ends', () => {
    expect(remoteText('  first line\r\n\tsecond   line\n')).toBe('first line second line');
  });

  it('measures the cut after flattening, so whitespace does not eat the budget', () => {
    expect(remoteText(`abc${' '.repeat(50)}def`, 8)).toBe('abc def');
  });
});

describe('a secret we hold, echoed by a peer', () => {
  it('is scrubbed even when it does not look like a token', () => {
    const secret = new Secret('plain words the peer should never repeat');
    expect(remoteText(`the peer said: ${secret.reveal()}!`)).toBe('the peer said: [REDACTED]!');
  });

  it('is scrubbed when the peer broke it over lines, before the text is flattened', () => {
    const secret = new Secret('canary-held-secret-0231-abcdefgh');
    const text = remoteText(`echo: canary-held-secret-\n0231-abcdefgh`);
    expect(text).not.toContain('0231');
    expect(text).not.toContain(secret.reveal());
  });
});
