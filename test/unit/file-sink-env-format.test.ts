import { readdir, realpath } from 'node:fs/promises';

import { parse } from 'dotenv';
import { describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { renderFile } from '../../src/sinks/file/file-format.js';
import { type FileSinkConfig, fileSinkType } from '../../src/sinks/file/file-sink.js';
import { boundFileSink, testMeta } from '../helpers/file-sink.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const meta = testMeta();
const render = (value: string) => renderFile('env', new Secret(value), meta, 'APP_TOKEN');

describe('env format', () => {
  // [what, value, how it is written]
  const cases: Array<[string, string, string]> = [
    ['safe characters', 'xaat-0123_abc.DEF:/+=@~', 'APP_TOKEN=xaat-0123_abc.DEF:/+=@~\n'],
    ['a double quote', 'ab"cd', `APP_TOKEN='ab"cd'\n`],
    ['a dollar sign', 'ab$cd${HOME}', `APP_TOKEN='ab$cd\${HOME}'\n`],
    ['a backquote', 'ab`cd', "APP_TOKEN='ab`cd'\n"],
    ['a backslash', 'ab\\cd', "APP_TOKEN='ab\\cd'\n"],
    ['a single quote', "it's", "APP_TOKEN=`it's`\n"],
    ['a hash', 'ab#cd', "APP_TOKEN='ab#cd'\n"],
    ['a leading hash', '#abc', "APP_TOKEN='#abc'\n"],
    ['spaces', '  a b  ', "APP_TOKEN='  a b  '\n"],
    ['a tab', 'a\tb', "APP_TOKEN='a\tb'\n"],
    ['a newline', 'a\nb', "APP_TOKEN='a\nb'\n"],
    ['a trailing newline', 'ab\n', "APP_TOKEN='ab\n'\n"],
    ['a carriage return', 'a\rb', 'APP_TOKEN="a\\rb"\n'],
    ['CR LF', 'a\r\nb', 'APP_TOKEN="a\\r\\nb"\n'],
    ['a trailing backslash', 'abc\\', "APP_TOKEN='abc\\'\n"],
    ['a backslash before a quote', "a\\'b", "APP_TOKEN=`a\\'b`\n"],
    ['unicode', 'grüße-🔑-\u2028-\ufeff', "APP_TOKEN='grüße-🔑-\u2028-\ufeff'\n"],
    ['backslash-n as two characters', 'a\\nb', "APP_TOKEN='a\\nb'\n"],
    ['backslash-r as two characters', 'a\\rb', "APP_TOKEN='a\\rb'\n"],
    ['something that looks like a second variable', "x'\nOTHER=1", "APP_TOKEN=`x'\nOTHER=1`\n"],
    ['a single quote and a newline', "it's\nok", "APP_TOKEN=`it's\nok`\n"],
    ['single quote, backquote and newline', "it's `x`\n", 'APP_TOKEN="it\'s `x`\\n"\n'],
    ['single quote, backquote and CR', "'`\r", 'APP_TOKEN="\'`\\r"\n'],
    ['single quote, double quote and trailing backslash', `'"\\`, 'APP_TOKEN=`\'"\\`\n'],
    ['the empty string', '', 'APP_TOKEN=\n'],
  ];

  it.each(cases)('reads back %s byte-identical through dotenv', (_what, value, rendered) => {
    expect(parse(render(value))).toEqual({ APP_TOKEN: value });
    expect(render(value)).toBe(rendered);
  });

  it('reads back, or refuses, every one of many random values made of the characters that matter', () => {
    const alphabet = ['a', 'Z', '0', ' ', '\t', '\n', '\r', "'", '"', '`', '\\', '$', '#', '=', 'n', 'r', 'é', '🔑'];
    let seed = 20261222;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * alphabet.length;
    let refused = 0;
    for (let i = 0; i < 5000; i++) {
      const value = Array.from({ length: 1 + (i % 12) }, () => alphabet[Math.floor(random())]).join('');
      let rendered: string;
      try {
        rendered = render(value);
      } catch (error) {
        expect(error).toBeInstanceOf(SinkError);
        refused++;
        continue;
      }
      expect(parse(rendered), JSON.stringify(value)).toEqual({ APP_TOKEN: value });
    }
    expect(refused).toBeLessThan(5000 / 4);
  });

  // No dotenv quoting keeps these: every quote character is in the value, or double quotes would
  // have to hold a CR together with a quote or a literal backslash-n.
  const impossible: Array<[string, string]> = [
    ['all three quotes', 'xaat-\'"`-canary-0400'],
    ['all three quotes and a newline', 'xaat-\'"`\n-canary-0401'],
    ['a CR and a double quote', 'xaat-"\r-canary-0402'],
    ['a CR and backslash-n as two characters', 'xaat-\r\\n-canary-0403'],
  ];

  it.each(impossible)('refuses a secret with %s, without the secret in the message', (_what, value) => {
    const error = (() => {
      try {
        return render(value);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toBe(
      'the secret cannot be written in env format without changing it (no dotenv quoting keeps every character it has); use format raw or json',
    );
    expectNoLeak({ error: (error as Error).message }, [value, 'canary']);
  });

  it('writes no file for a secret that env format cannot hold, and says which sink', async () => {
    const dir = await realpath(await makeTempDir());
    const parsed = fileSinkType.parse({ type: 'file', path: 'app.env', format: 'env' }, { policyDir: dir });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const error = await boundFileSink(parsed.config as FileSinkConfig)
      .write(new Secret('xaat-\'"`-canary-0404'), meta, {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as Error).message).toMatch(/^cannot write file app\.env: the secret cannot be written in env format/);
    expect(await readdir(dir)).toEqual([]);
  });
});
