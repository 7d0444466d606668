import { Writable } from 'node:stream';

import { type Logger, pino } from 'pino';

/**
 * A pino logger at trace level that keeps each line as written: none of the rotator's redaction or
 * scrubbing, so that a secret a component hands its logger shows in `lines`.
 */
export function rawLog(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'trace' }, destination) };
}
