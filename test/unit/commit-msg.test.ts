import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { commitMessageProblems } from '../../scripts/check-commit-msg.mjs';
import { runScript } from '../helpers/scripts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const BODY = 'A body says why.';
const LONG = 'the subject is 73 characters long, more than 72';
const PERIOD = 'the subject ends with a period';
const LINE_2 = 'line 2 is not blank: a blank line separates the subject from the body';
const NO_BODY = 'there is no body: after a blank line, say why';
const SCISSORS = '# ------------------------ >8 ------------------------';

describe('commitMessageProblems', () => {
  it.each<[string, string, string[]]>([
    ['a subject, a blank line and a body follow the style', `journal: skip a torn tail\n\n${BODY}\n`, []],
    ['a subject of exactly 72 characters is short enough', `${'a'.repeat(72)}\n\n${BODY}`, []],
    ['a subject of 73 characters is too long', `${'a'.repeat(73)}\n\n${BODY}`, [LONG]],
    ['a subject counts characters, not bytes', `${'é'.repeat(72)}\n\n${BODY}`, []],
    ['a subject ending with a period is refused', `journal: skip a torn tail.\n\n${BODY}`, [PERIOD]],
    ['a subject may end with other punctuation', `journal: why skip a torn tail?\n\n${BODY}`, []],
    ['a body starting on line 2 is refused', `journal: skip a torn tail\n${BODY}`, [LINE_2]],
    ['a subject alone has no body', 'journal: skip a torn tail\n', [NO_BODY]],
    ['blank lines after the subject are no body', 'journal: skip a torn tail\n\n\n  \n', [NO_BODY]],
    ['a merge needs no body', "Merge branch 'ws26'", []],
    ['a revert needs no body', 'Revert "journal: skip a torn tail"', []],
    ['a fixup needs no body', 'fixup! journal: skip a torn tail', []],
    ['a squash needs no body', 'squash! journal: skip a torn tail', []],
    ['a subject that merely starts with the letters of Merge needs a body', 'Mergesort: keep equal keys in order', [NO_BODY]],
    [
      "comment lines, as git's editor template has them, are ignored",
      `# Please enter the commit message\njournal: skip a torn tail\n# comment\n\n${BODY}\n# On branch habits26\n`,
      [],
    ],
    ['a body of comment lines only is no body', 'journal: skip a torn tail\n\n# a comment\n', [NO_BODY]],
    ['nothing after the scissors line counts', `journal: skip a torn tail\n\n${BODY}\n${SCISSORS}\n${'x'.repeat(100)}.\n`, []],
    ['a body after the scissors line is no body', `journal: skip a torn tail\n${SCISSORS}\n\n${BODY}\n`, [NO_BODY]],
    ['blank lines before the subject are ignored, as git strips them', `\n\njournal: skip a torn tail\n\n${BODY}`, []],
    ['CRLF line endings are read as lines', `journal: skip a torn tail\r\n\r\n${BODY}\r\n`, []],
    ['an empty message is refused', '\n# only a comment\n', ['the message is empty']],
    ['every problem of a message is named', `${'a'.repeat(72)}.\n${BODY}`, [LONG, PERIOD, LINE_2]],
  ])('%s', (_case, message, problems) => {
    expect(commitMessageProblems(message)).toEqual(problems);
  });
});

/** Git in a throwaway repository, untouched by this machine's git settings. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    },
  }).trim();
}

// Removed here too: Stryker's vitest config has no run-wide temporary folder.
const folders: string[] = [];
async function tempFolder(): Promise<string> {
  const folder = await makeTempDir();
  folders.push(folder);
  return folder;
}
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

function commit(cwd: string, message: string): string {
  git(cwd, 'commit', '--quiet', '--allow-empty', '--cleanup=verbatim', '-m', message);
  return git(cwd, 'rev-parse', '--short', 'HEAD');
}

describe('check-commit-msg.mjs', () => {
  it('as the commit-msg hook, refuses a message file that breaks the style and names each problem', async () => {
    const dir = await tempFolder();
    const bad = join(dir, 'COMMIT_EDITMSG');
    await writeFile(bad, 'journal: skip a torn tail.\n');
    const refused = await runScript('check-commit-msg.mjs', [bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`commit message: ${PERIOD}\n`);
    expect(refused.stderr).toContain(`commit message: ${NO_BODY}\n`);

    await writeFile(bad, `journal: skip a torn tail\n\n${BODY}\n`);
    expect(await runScript('check-commit-msg.mjs', [bad])).toMatchObject({ code: 0, stderr: '' });
  });

  it('with --range, names each problem of every non-merge commit after the base with its short hash', async () => {
    const repo = await tempFolder();
    git(repo, 'init', '--quiet', '--initial-branch=main');
    const base = commit(repo, 'an old commit, from before the rule, without a body.');
    const good = commit(repo, `journal: skip a torn tail\n\n${BODY}`);
    git(repo, 'switch', '--quiet', '--create', 'side');
    const bad = commit(repo, `${'a'.repeat(73)}\n${BODY}`);
    git(repo, 'switch', '--quiet', 'main');
    // A merge whose subject breaks the rule: merges are git's words, not checked.
    git(repo, 'merge', '--quiet', '--no-ff', '-m', 'A merge that ends with a period.', 'side');

    const result = await runScript('check-commit-msg.mjs', ['--range', `${base}..HEAD`], repo);
    expect(result.code).toBe(1);
    const named = result.stderr.split('\n').filter((line) => /^[0-9a-f]{7,}: /.test(line));
    // Only the bad commit: not the good one, not the base, not the merge.
    expect(named).toEqual([`${bad}: ${LONG}`, `${bad}: ${LINE_2}`]);

    expect(await runScript('check-commit-msg.mjs', ['--range', `${base}..${good}`], repo)).toMatchObject({ code: 0, stderr: '' });
  });

  it('with --range, skips and says why in a shallow clone that lacks the base commit', async () => {
    const origin = await tempFolder();
    git(origin, 'init', '--quiet', '--initial-branch=main');
    const base = commit(origin, `journal: skip a torn tail\n\n${BODY}`);
    commit(origin, 'a subject alone, which a full clone would refuse');
    const clone = join(await tempFolder(), 'clone');
    git(origin, 'clone', '--quiet', '--depth=1', `file://${origin}`, clone);

    const result = await runScript('check-commit-msg.mjs', ['--range', `${base}..HEAD`], clone);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`commit style: skipped, this is a shallow clone without ${base}`);
  });
});
