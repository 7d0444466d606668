// Command-line arguments of the release scripts, read with node:util's parseArgs. A bad argument is
// a usage error: one line naming it, exit 2, no stack trace (as the CLI does with bad config).
import { parseArgs } from 'node:util';

/**
 * @template {import('node:util').ParseArgsOptionsConfig} T
 * @param {string} script the npm script's name, which every message starts with
 * @param {T} options
 * @param {string[]} argv
 */
export function parseScriptArguments(script, options, argv = process.argv.slice(2)) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    return exitWithProblems(script, [/** @type {Error} */ (error).message]);
  }
}

/**
 * Prints each problem on its own line and exits 2.
 * @param {string} script
 * @param {string[]} problems
 * @returns {never}
 */
export function exitWithProblems(script, problems) {
  for (const problem of problems) process.stderr.write(`${script}: ${problem}\n`);
  process.exit(2);
}
