#!/usr/bin/env node
// The commit style, checked: a subject of at most 72 characters without a trailing period, a blank
// line, then a body saying why. A small script rather than commitlint, which enforces Conventional
// Commits unless told otherwise; this history writes `journal: …`.
//
//   node scripts/check-commit-msg.mjs FILE        the commit-msg hook (.githooks/commit-msg)
//   node scripts/check-commit-msg.mjs --range A..B every non-merge commit of A..B (CI, from
//                                                  scripts/commit-style-base)
//
// Exit 0: every message follows the style; 1: a message does not, each problem printed; 2: usage.
// Runs on the Node.js of the contributor's PATH (git hooks do): nothing newer than Node 20 here.
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { exitWithProblems, parseScriptArguments } from './lib/script-arguments.mjs';

export const SUBJECT_LIMIT = 72;

/** Git's line in `git commit -v`: what follows it is the diff, never part of the message. */
const SCISSORS = /^# -+ >8 -+$/;

/** Subjects git writes itself, or that a rebase --autosquash folds away: no body needed. */
const NEEDS_NO_BODY = /^(?:(?:Merge|Revert)\b|(?:fixup|squash)! )/;

/**
 * What is wrong with a commit message, as git would record it: `#` lines are comments, and
 * nothing from the scissors line on counts. Empty when it follows the style.
 * @param {string} text
 * @returns {string[]}
 */
export function commitMessageProblems(text) {
  const all = text.split(/\r?\n/);
  const scissors = all.findIndex((line) => SCISSORS.test(line));
  const lines = (scissors === -1 ? all : all.slice(0, scissors)).filter((line) => !line.startsWith('#')).map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  if (lines.length === 0) return ['the message is empty'];

  const [subject, second, ...rest] = lines;
  const problems = [];
  const length = [...subject].length;
  if (length > SUBJECT_LIMIT) problems.push(`the subject is ${length} characters long, more than ${SUBJECT_LIMIT}`);
  if (subject.endsWith('.')) problems.push('the subject ends with a period');
  if (second !== undefined && second !== '') problems.push('line 2 is not blank: a blank line separates the subject from the body');
  const hasBody = second || rest.some((line) => line !== '');
  if (!hasBody && !NEEDS_NO_BODY.test(subject)) problems.push('there is no body: after a blank line, say why');
  return problems;
}

/**
 * Every non-merge commit of a range with its short hash, oldest first.
 * @param {string} range
 * @returns {Array<{ hash: string, message: string }>}
 */
function commitsOf(range) {
  const log = git(['log', '-z', '--no-merges', '--no-show-signature', '--reverse', '--format=%h%n%B', range, '--']);
  return log
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const newline = entry.indexOf('\n');
      return { hash: entry.slice(0, newline), message: entry.slice(newline + 1) };
    });
}

/**
 * Why a range cannot be checked here without it being the commits' fault, or undefined: a shallow
 * clone (CI often fetches one commit) lacks the commit the range starts from.
 * @param {string} range
 */
function whyUnchecked(range) {
  const start = range.split('..')[0];
  if (!start || isCommit(start)) return undefined;
  if (git(['rev-parse', '--is-shallow-repository']).trim() !== 'true') return undefined;
  return `this is a shallow clone without ${start}, where the range starts; git fetch --unshallow to check it`;
}

/** @param {string} name */
function isCommit(name) {
  try {
    git(['rev-parse', '--verify', '--quiet', `${name}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** @param {string[]} args */
function git(args) {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
}

/** @param {string} range */
function checkRange(range) {
  if (!range.includes('..')) exitWithProblems('check-commit-msg', [`--range ${range}: give it as A..B`]);
  const why = whyUnchecked(range);
  if (why) {
    console.log(`commit style: skipped, ${why}`);
    return 0;
  }
  let commits;
  try {
    commits = commitsOf(range);
  } catch (error) {
    const said = String(/** @type {{ stderr?: string }} */ (error).stderr ?? error).trim();
    return exitWithProblems('check-commit-msg', [`--range ${range}: git log failed: ${said}`]);
  }
  const problems = commits.flatMap(({ hash, message }) => commitMessageProblems(message).map((problem) => `${hash}: ${problem}`));
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`commit style: ${problems.length} problem(s) in ${range}; reword with git rebase -i`);
    return 1;
  }
  console.log(`commit style: the ${commits.length} commit(s) of ${range} follow it`);
  return 0;
}

/** @param {string} file */
function checkFile(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return exitWithProblems('check-commit-msg', [`cannot read ${file} (${/** @type {{ code?: string }} */ (error).code})`]);
  }
  const problems = commitMessageProblems(text);
  for (const problem of problems) console.error(`commit message: ${problem}`);
  if (problems.length > 0) {
    console.error(`commit message: not committed; the message is kept in ${file}`);
    return 1;
  }
  return 0;
}

function main() {
  const { values, positionals } = parseScriptArguments('check-commit-msg', { range: { type: 'string' } });
  if (values.range !== undefined && positionals.length === 0) return checkRange(values.range);
  if (values.range === undefined && positionals.length === 1) return checkFile(positionals[0]);
  return exitWithProblems('check-commit-msg', ['usage: check-commit-msg.mjs FILE | --range A..B']);
}

// Run as a program, not when a test imports commitMessageProblems.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
