import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, type Pair, parseDocument } from 'yaml';

import type { ConfigIssue } from '../errors.js';

/**
 * The issues of a policy, each with the line and column (1-based) of the entry its path names in
 * the policy's text: a mapping entry by its key, a list item by itself; for an entry that is missing
 * (a required key), the nearest entry around it that is there. A path outside the policy (an
 * environment variable, a file) gets none, nor does an issue that already has one (a syntax error,
 * placed by the parser). The text is parsed again only when some issue is to be placed: this runs
 * when a policy is refused, never on the way to a run.
 */
export function withPositions(issues: readonly ConfigIssue[], text: string): ConfigIssue[] {
  const toPlace = issues.map((issue) => (issue.line === undefined ? policyPathSegments(issue.path) : undefined));
  if (toPlace.every((segments) => segments === undefined)) return [...issues];
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  return issues.map((issue, index) => {
    const segments = toPlace[index];
    const offset = segments && entryOffset(document, segments);
    if (offset === undefined) return issue;
    const { line, col } = lineCounter.linePos(offset);
    return { ...issue, line, column: col };
  });
}

/**
 * `tokens[1].sinks[0].path` as `['tokens', 1, 'sinks', 0, 'path']` (a note such as ` (from
 * defaults)` after it set aside); `(top level)` as none. Undefined for what is not a place in the
 * policy: `env.NAME`, `--dotenv FILE`, a file name with its line.
 */
export function policyPathSegments(path: string): Array<string | number> | undefined {
  const bare = path.replace(/ \([^)]*\)$/, '');
  if (bare === '(top level)') return [];
  if (bare === 'env' || bare.startsWith('env.') || !/^[A-Za-z]/.test(bare)) return undefined;
  const segments: Array<string | number> = [];
  const part = /(?:^|\.)([A-Za-z_][\w-]*)|\[(\d+)\]/y;
  while (part.lastIndex < bare.length) {
    const match = part.exec(bare);
    if (!match) return undefined;
    segments.push(match[1] ?? Number(match[2]));
  }
  return segments;
}

/** Where in the text the deepest entry along `segments` begins; undefined when not even the first is there. */
function entryOffset(document: Document, segments: ReadonlyArray<string | number>): number | undefined {
  let node: Node | null | undefined = document.contents;
  let offset = segments.length === 0 ? node?.range?.[0] : undefined;
  for (const segment of segments) {
    // An alias stands for its anchor's value: the problem is where that value is written.
    if (isAlias(node)) node = node.resolve(document);
    let entry: { start: Node | null | undefined; value: Node | null | undefined } | undefined;
    if (typeof segment === 'string' && isMap(node)) {
      const pair: Pair | undefined = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
      if (pair) entry = { start: isScalar(pair.key) ? pair.key : undefined, value: pair.value as Node | null };
    } else if (typeof segment === 'number' && isSeq(node)) {
      const item: Node | null | undefined = node.items[segment] as Node | null | undefined;
      if (item) entry = { start: item, value: item };
    }
    if (!entry) break;
    offset = entry.start?.range?.[0] ?? offset;
    node = entry.value;
  }
  return offset;
}
