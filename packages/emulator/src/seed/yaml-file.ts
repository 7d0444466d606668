import { LineCounter, parseDocument } from 'yaml';

import { EmulatorUsageError } from '../usage-error.js';

/** A seed reuses few values: far fewer aliases than this is a mistake or a "billion laughs" document. */
const MAX_ALIAS_COUNT = 100;

/**
 * The value of a seed file's YAML (or JSON) text. Syntax errors come back at `file:line:col`, and
 * an alias problem as a usage error, never as a stack trace.
 */
export function yamlFileValue(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
  if (document.errors.length > 0) {
    throw new EmulatorUsageError(
      document.errors.map((e) => {
        const position = e.linePos?.[0];
        return {
          path: `${file}:${position?.line ?? '?'}:${position?.col ?? '?'}`,
          message: (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, ''),
        };
      }),
    );
  }
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    throw new EmulatorUsageError([{ path: file, message: `aliases: ${error.message}` }]);
  }
}
