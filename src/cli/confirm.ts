import { createInterface } from 'node:readline/promises';

import type { CliIo } from './io.js';

/** Asks `question` on stderr and reads the answer from stdin: only `y` or `yes` is a yes. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  const prompt = createInterface({ input: io.stdin!, output: io.stderr as NodeJS.WritableStream });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}
