import { CORE_SCHEMA, load } from 'js-yaml';
import { type Alias, type Document, isAlias, LineCounter, parseDocument, visit } from 'yaml';

import { ConfigError } from '../errors.js';

/**
 * How often one anchor's value may be reused through aliases (the yaml library's own count, which
 * also multiplies through nested aliases). A policy needs few aliases, as `defaults` already shares
 * settings; the limit refuses a "billion laughs" document, whose few lines of nested aliases stand
 * for billions of values, before anything walks that many.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * The value of a YAML (or JSON: YAML 1.2 is a superset) text. Syntax errors and alias problems are
 * thrown as a ConfigError, each at `file:line:col`: the yaml library reports bad aliases as a bare
 * ReferenceError, which would reach the user as a stack trace.
 */
export function yamlValue(text: string, file: string): unknown {
  return quickValue(text) ?? documentValue(text, file);
}

/**
 * The value as js-yaml reads it, or undefined to leave the text to the yaml library. For a policy of
 * 5,000 tokens (25,000 lines) js-yaml peaks at about 70 MB resident and 0.1 s, yaml's Document at
 * 180-205 MB and 0.8-1.1 s, and the heap grown for a parse stays with a daemon. js-yaml gives no
 * positions and shares aliased values instead of counting them, so it only reads what it accepts
 * whole: a text with an alias (`*`), one it refuses (a syntax error, a duplicate key, a tag it does
 * not know, several documents), or an empty one goes to yaml, which returns the same value or names
 * the problem at file:line:col as before. CORE_SCHEMA is YAML 1.2's core schema, as yaml reads it:
 * dates stay strings and `<<` is a plain key.
 */
function quickValue(text: string): unknown {
  if (text.includes('*')) return undefined;
  try {
    return load(text, { schema: CORE_SCHEMA }) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The yaml library's reading, with positions for every problem. */
export function documentValue(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
  if (document.errors.length > 0) {
    throw new ConfigError(
      document.errors.map((e) => {
        const position = e.linePos?.[0];
        return {
          path: `${file}:${position?.line ?? '?'}:${position?.col ?? '?'}`,
          message: (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, ''),
          ...(position ? { line: position.line, column: position.col } : {}),
        };
      }),
    );
  }
  const at = (node: Alias) => {
    const { line, col } = lineCounter.linePos(node.range?.[0] ?? 0);
    return { path: `${file}:${line}:${col}`, line, column: col };
  };

  // Every alias is written with '*': a text without one has none, and is not walked twice more
  // (a tenth of the parse for a policy of thousands of tokens).
  if (!text.includes('*')) return document.toJS();

  const undefinedAliases = findUndefinedAliases(document).map((alias) => ({ ...at(alias), message: undefinedMessage(alias) }));
  if (undefinedAliases.length > 0) throw new ConfigError(undefinedAliases);

  const failed = recordFailingAlias(document);
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const alias = failed();
    if (!(error instanceof ReferenceError) || alias === undefined) throw error;
    throw new ConfigError([{ ...at(alias), message: aliasMessage(alias, error) }]);
  }
}

/** Aliases with no anchor of their name before them, in the order the library resolves them. */
function findUndefinedAliases(document: Document): Alias[] {
  const anchors = new Set<string>();
  const found: Alias[] = [];
  visit(document, {
    Node(_key, node) {
      if (isAlias(node)) {
        if (!anchors.has(node.source)) found.push(node);
      } else if (node.anchor) anchors.add(node.anchor);
    },
  });
  return found;
}

/**
 * The library says why an alias failed but not which one; each alias is wrapped so the first to
 * throw (the innermost, when one alias's value is resolved while resolving another) is kept.
 */
function recordFailingAlias(document: Document): () => Alias | undefined {
  let failed: Alias | undefined;
  visit(document, {
    Alias(_key, node) {
      const toJSON = node.toJSON.bind(node);
      node.toJSON = (...args: Parameters<Alias['toJSON']>) => {
        try {
          return toJSON(...args);
        } catch (error) {
          failed ??= node;
          throw error;
        }
      };
    },
  });
  return () => failed;
}

function undefinedMessage(alias: Alias): string {
  return `alias *${alias.source} is not defined; an alias needs an anchor &${alias.source} earlier in the file`;
}

function aliasMessage(alias: Alias, error: ReferenceError): string {
  if (/excessive alias count/i.test(error.message)) {
    return `alias *${alias.source} expands beyond the limit of ${MAX_ALIAS_COUNT} aliased values, a guard against resource exhaustion ("billion laughs"); use fewer or less nested aliases`;
  }
  if (/unresolved alias/i.test(error.message)) return undefinedMessage(alias);
  return `alias *${alias.source}: ${error.message}`;
}
