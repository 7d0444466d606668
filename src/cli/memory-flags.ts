import { setFlagsFromString } from 'node:v8';

/** A V8 flag the daemon sets for itself, unless a flag of the user's speaks of the same thing. */
interface MemoryFlag {
  flag: string;
  /**
   * A flag of the user's on the same subject wins: on Node's command line (`node --turbofan
   * …/token-rotator daemon`), or in NODE_OPTIONS for the few V8 flags Node accepts there.
   */
  subject: RegExp;
}

/**
 * What a long-lived, mostly idle process gains from V8 for its resident memory, measured with
 * `npm run bench` (rows 5a, 5e, x1) and each cheap for a daemon whose work is a few requests a check:
 *
 * - The young generation stays at the size it starts with. V8 doubles it, up to 32 MB per
 *   semi-space, whenever much of it survives a collection, which the first check of every token
 *   does; the daemon then holds that memory while idle for hours. The container image says the same
 *   with NODE_OPTIONS=--max-semi-space-size=1; heap sizes can only be given on Node's command line,
 *   but the growth factor is read at each growth, so it can be set here.
 * - No compiler beyond the interpreter (neither Turbofan, Maglev nor Sparkplug's baseline code):
 *   the compilers' own code (pages of the node binary), their working memory on V8's worker threads
 *   (malloc arenas that glibc keeps) and the compiled code cost an idle daemon with 100 tokens
 *   13-18 MB resident, Sparkplug 0.5-2 of them; a check costs more CPU (2.2-2.9 ms → 4 ms here, a
 *   third of that Sparkplug's), nothing that matters at one check per token per schedule.
 * - --optimize-for-size: V8 grows the heap in smaller steps and gives pages back sooner (4-5 MB
 *   with 100 tokens, the heap grown by the first pass of 1,000 tokens given back).
 *
 * A `plan` or `once` keeps V8's defaults: they are short, and speed is what they are judged by.
 */
export const DAEMON_MEMORY_FLAGS: readonly MemoryFlag[] = [
  { flag: '--semi-space-growth-factor=1', subject: /semi[-_]space/ },
  { flag: '--no-turbofan', subject: /^--(no[-_])?(turbofan|opt|max[-_]opt|jitless|lite[-_]mode)(=|$)/ },
  { flag: '--no-maglev', subject: /^--(no[-_])?(maglev|max[-_]opt|jitless|lite[-_]mode)(=|$)/ },
  { flag: '--no-sparkplug', subject: /^--(no[-_])?(sparkplug|max[-_]opt|jitless|lite[-_]mode)(=|$)/ },
  { flag: '--optimize-for-size', subject: /^--(no[-_])?(optimize[-_]for[-_]size|lite[-_]mode)(=|$)/ },
];

/**
 * `plan` checks thousands of tokens in one run and keeps only a line of each: left alone, V8 grows
 * the young generation to 2 × 32 MB and lets the garbage promoted out of it reach four times the live
 * heap before a full collection (5,000 tokens: 285 MB peak). Kept small, and the old generation
 * collected at three times the live heap, the same plan peaks at about 170 MB for 11% more CPU time.
 */
export const PLAN_MEMORY_FLAGS: readonly MemoryFlag[] = [
  { flag: '--semi-space-growth-factor=1', subject: /semi[-_]space/ },
  { flag: '--heap-growing-percent=200', subject: /heap[-_]growing/ },
];

/** The flags of `table` that no flag of the user's overrides. */
export function memoryFlags(table: readonly MemoryFlag[], execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((arg) => arg !== '');
  return table.filter(({ subject }) => !given.some((arg) => subject.test(arg))).map(({ flag }) => flag);
}

/**
 * Sets a command's memory flags: before its modules load, since loading them alone grows the young
 * generation and warms functions for the optimizing compilers.
 */
export function setMemoryFlags(table: readonly MemoryFlag[], execArgv: readonly string[], nodeOptions: string | undefined): void {
  const flags = memoryFlags(table, execArgv, nodeOptions);
  if (flags.length > 0) setFlagsFromString(flags.join(' '));
}
