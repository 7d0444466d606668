import { lstatSync } from 'node:fs';

import { forThisTurn } from '../../common/for-this-turn.js';
import type { ConfigIssue } from '../../errors.js';
import { type FolderLinks, linksInPathSync, type PathLink, realLocationSync } from '../../fs/path-links.js';

export interface Destination {
  /** Where writes land, links resolved: the identity of the destination. */
  realPath: string;
  issues: ConfigIssue[];
}

/**
 * What the file system says about a sink's absolute path when the policy is read. Writes check
 * links again, since the path can change in between; the rest fails the write clearly enough.
 */
export function inspectDestination(path: string, allowSymlinks: boolean): Destination {
  const issues: ConfigIssue[] = [];
  const links = linksInPathSync(path, foldersOfThisParse());
  if (links.length > 0 && !allowSymlinks) issues.push({ path: 'path', message: refusedLinks(links) });

  const realPath = realLocationSync(path);
  const existing = lstatOrUndefined(realPath);
  // Links are resolved up to a limit, so a link left at the end is part of a loop.
  if (existing?.isSymbolicLink()) issues.push({ path: 'path', message: `${path} leads into a loop of symbolic links` });
  else if (existing?.isDirectory()) issues.push({ path: 'path', message: `${path} is a folder; path must name a file` });
  else if (existing && !existing.isFile()) issues.push({ path: 'path', message: `${path} exists and is not a regular file` });
  return { realPath, issues };
}

/** The folders looked at while one policy is parsed: a policy of n sinks in one folder looks at its ancestors once. */
const foldersOfThisParse = forThisTurn((): FolderLinks => new Map());

/** A link can send the secret to a place that nobody reviewing the policy sees. */
function refusedLinks(links: PathLink[]): string {
  const list = links.map((link) => `${link.path} is a symbolic link to ${link.target}`).join(', and ');
  return `${list}; a sink does not write through symbolic links, so that its secret cannot be redirected: set allowSymlinks: true on this sink to follow them`;
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
