import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';

/**
 * Symbolic links on the way to a file, and where a path really leads. Sync for policy parsing,
 * which is sync, and for reads and writes of sinks: each call is an lstat of microseconds, and a
 * round trip through the thread pool per path component cost many times that for every token.
 */

export interface PathLink {
  /** The link itself, absolute. */
  path: string;
  /** What it points to, as written in the link. */
  target: string;
}

/** Symlink chains longer than this are loops (Linux gives up at 40 too). */
const MAX_LINKS = 40;

/** `/a/b/c` -> `/a`, `/a/b`, `/a/b/c`. */
function componentPaths(path: string): string[] {
  const { root } = parse(path);
  const parts = path.slice(root.length).split(sep).filter(Boolean);
  return parts.map((_, i) => join(root, ...parts.slice(0, i + 1)));
}

/**
 * Every symbolic link among the existing components of the absolute `path`, the last included.
 * The walk ends where a component cannot be seen (missing, or in a folder this user cannot read).
 */
export function linksInPathSync(path: string, folders?: FolderLinks): PathLink[] {
  const links: PathLink[] = [];
  const components = componentPaths(path);
  for (const [i, at] of components.entries()) {
    // What a folder is does not change within one look at many paths: each is looked at once. The
    // path's own last component is always looked at.
    const folder = i < components.length - 1;
    const cached = folder ? folders?.get(at) : undefined;
    const found = cached ?? lookAt(at);
    if (folder && cached === undefined) folders?.set(at, found);
    if (found === 'unseen') break;
    if (found) links.push(found);
  }
  return links;
}

/** The folders on the way to many paths, as found: a link, not a link (null), or not to be seen. */
export type FolderLinks = Map<string, PathLink | null | 'unseen'>;

function lookAt(at: string): PathLink | null | 'unseen' {
  try {
    return lstatSync(at).isSymbolicLink() ? { path: at, target: readlinkSync(at) } : null;
  } catch {
    return 'unseen';
  }
}

/**
 * The first symbolic link among the existing components of the absolute `path`, if any. Only a
 * refused path has one, so walking on past it (as linksInPathSync does) costs nothing that matters.
 */
export function firstLinkInPathSync(path: string, folders?: FolderLinks): PathLink | undefined {
  return linksInPathSync(path, folders)[0];
}

/**
 * Where writing to the absolute `path` really lands, links followed: the real path of its deepest
 * existing ancestor, then the components that do not exist yet. A link whose target does not exist
 * yet leads to that target, which a write creates. A link's target is relative to the real folder
 * the link is in, not to the path it was reached by.
 */
export function realLocationSync(path: string, links = 0): string {
  const missing: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync.native(at), ...missing);
    } catch {
      const link = links < MAX_LINKS ? readLinkSync(at) : undefined;
      if (link !== undefined) return realLocationSync(join(resolve(realLocationSync(dirname(at), links + 1), link), ...missing), links + 1);
      if (dirname(at) === at) return path;
      missing.unshift(basename(at));
    }
  }
}

function readLinkSync(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
