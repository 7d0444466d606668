import { accessSync, constants, statSync } from 'node:fs';
import { dirname, relative } from 'node:path';

import { SinkError } from '../../errors.js';
import { RefusedWriteError, writeFileAtomic } from '../../fs/atomic-write.js';
import { firstLinkInPathSync, type FolderLinks, realLocationSync } from '../../fs/path-links.js';
import { readFileNowIfExists } from '../../fs/read-file-now.js';
import type { SinkClient } from '../sink.js';
import { parseFileContent, renderFile } from './file-format.js';
import type { FileSinkConfig } from './file-sink-config.js';

const describe = (config: FileSinkConfig) => `file ${config.displayPath}`;

/** Files need no connection: one client serves every file sink, and closing it is nothing. */
export function fileSinkClient(): SinkClient<FileSinkConfig> {
  return {
    async write(config, secret, meta, { signal }) {
      signal?.throwIfAborted();
      let content: string;
      try {
        content = renderFile(config.format, secret, meta, config.envKey);
      } catch (error) {
        throw new SinkError(`cannot write ${describe(config)}: ${(error as Error).message}`, { cause: error });
      }
      try {
        const target = destination(config, 'write');
        signal?.throwIfAborted();
        return await writeFileAtomic(target, content, { mode: config.mode });
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error;
        throw new SinkError(`cannot write ${describe(config)}: ${describeFsError(error, config.path)}`, { cause: error });
      }
    },

    async read(config, { signal }) {
      signal?.throwIfAborted();
      let text: string | undefined;
      try {
        text = readFileNowIfExists(destination(config, 'read'), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new SinkError(`cannot read ${describe(config)}: ${describeFsError(error, config.path)}`, { cause: error });
      }
      return text === undefined ? undefined : parseFileContent(config.format, text, config.envKey);
    },

    async preflight(config, { signal }) {
      signal?.throwIfAborted();
      try {
        writable(destination(config, 'write'));
      } catch (error) {
        throw new SinkError(`cannot write ${describe(config)}: ${describeFsError(error, config.path)}`, { cause: error });
      }
    },

    async close() {},
  };
}

/**
 * The folders on the way to sink files, as looked at within the last second, for reads only: the
 * checks of thousands of tokens in one folder look at it once (an lstat per folder per token was a
 * tenth of `plan` over 5,000 tokens). A read only learns whether the sink holds the current secret;
 * every write looks at each folder afresh, so no secret is written through a link swapped in since.
 */
const READ_FOLDERS_FOR_MS = 1_000;
let readFolders: { at: number; folders: FolderLinks } | undefined;

function recentFolders(): FolderLinks {
  const now = performance.now();
  if (!readFolders || now - readFolders.at >= READ_FOLDERS_FOR_MS) readFolders = { at: now, folders: new Map() };
  return readFolders.folders;
}

/**
 * Checked again at every read and write: the path may have changed since the policy was read.
 * Following links means writing at the real location, so the temporary file and the rename are there.
 */
function destination(config: FileSinkConfig, verb: 'read' | 'write'): string {
  if (config.allowSymlinks) return realLocationSync(config.path);
  const link = firstLinkInPathSync(config.path, verb === 'read' ? recentFolders() : undefined);
  if (link) {
    throw new RefusedWriteError(
      `${link.path} is a symbolic link to ${link.target}; refusing to ${verb} through it (set allowSymlinks: true on the sink to follow links)`,
    );
  }
  return config.path;
}

/**
 * Whether a write could work, without writing: the file, when it is there, is a regular file (the
 * write refuses anything else); the nearest folder that exists is a folder this process may create
 * files in (the temporary file, or the folders still missing, go there). A file in the way of a
 * folder is named itself, not the path below it that the system call failed on. Looked at
 * synchronously, as `readFileNow` reads: a stat or two on the thread pool, and an ENOENT thrown for
 * a sink not written yet, cost many times the system calls themselves, once per token.
 */
function writable(path: string): void {
  const existing = statIfThere(path);
  if (existing?.isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR', path });
  if (existing && !existing.isFile()) throw new RefusedWriteError(`${path} exists and is not a regular file`);
  let folder = dirname(path);
  for (;;) {
    const found = statIfThere(folder);
    if (found) {
      if (!found.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR', path: folder });
      accessSync(folder, constants.W_OK | constants.X_OK);
      return;
    }
    if (dirname(folder) === folder) return;
    folder = dirname(folder);
  }
}

/** Undefined when nothing is there, also when a file stands in place of a folder on the way (ENOTDIR): the walk up finds that file. */
function statIfThere(path: string) {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** File system errors name the path and the errno, which is what an operator needs to act. */
function describeFsError(error: unknown, path: string): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code === 'EREFUSED') return e.message;
  const where = e?.path ? relative(process.cwd(), e.path) || e.path : path;
  switch (e?.code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${where})`;
    case 'ENOSPC':
      return 'no space left on device';
    case 'ENOTDIR':
    case 'EEXIST':
      return `a file is in the way of a folder (${where})`;
    case 'EROFS':
      return `read-only file system (${where})`;
    case 'EISDIR':
      return `a folder is where the file should be (${where})`;
    default:
      return e?.code ? `${e.code} (${where})` : String(e?.message ?? error);
  }
}
