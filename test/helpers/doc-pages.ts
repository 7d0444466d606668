import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repositoryRoot = resolve(import.meta.dirname, '../..');

/** The pages a reader is sent to: README, CONTRIBUTING, SECURITY and every page under docs/, as repository paths. */
export function docPages(): string[] {
  const docs = readdirSync(join(repositoryRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file.split('\\').join('/')}`)
    .sort();
  return [...['README.md', 'CONTRIBUTING.md', 'SECURITY.md'].filter((file) => existsSync(join(repositoryRoot, file))), ...docs];
}

export const readPage = (page: string): string => readFileSync(join(repositoryRoot, page), 'utf8');

export interface CodeBlock {
  page: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  language: string;
  text: string;
  /** The HTML comment on the line just before the fence, if any (`<!-- test: gcp-role -->`). */
  marker: string | undefined;
}

/** Every fenced code block of a page, in order. */
export function codeBlocks(page: string): CodeBlock[] {
  const text = readPage(page);
  return [...text.matchAll(/^```(\S*)\n(.*?)^```$/gms)].map((match) => {
    const before = text.slice(0, match.index).split('\n');
    const previous = before.at(-2)?.trim() ?? '';
    return {
      page,
      line: before.length,
      language: match[1]!,
      text: match[2]!,
      marker: /^<!--\s*(.*?)\s*-->$/.exec(previous)?.[1],
    };
  });
}
