import { relative } from 'node:path';

import { SinkError } from '../../errors.js';
import { RefusedWriteError, writeFileAtomic } from '../../fs/atomic-write.js';
import { firstLinkInPath, realLocation } from '../../fs/path-links.js';
import type { Secret } from '../../secret.js';
import type { Sink, SinkFactory } from '../sink.js';
import { renderFile } from './file-format.js';
import { type FileSinkConfig, parseFileSinkConfig } from './file-sink-config.js';

export type { FileSinkConfig };

export const fileSinkFactory: SinkFactory<FileSinkConfig> = {
  type: 'file',
  parse: parseFileSinkConfig,
  // The real location, so that two paths to one file (through a link) are one destination.
  target: (config) => `file:${config.realPath}`,
  localPath: (config) => config.realPath,
  create: (config) => new FileSink(config),
};

class FileSink implements Sink {
  constructor(private readonly config: FileSinkConfig) {}

  describe(): string {
    return `file ${this.config.displayPath}`;
  }

  async write(secret: Secret, meta: Parameters<Sink['write']>[1]) {
    let content: string;
    try {
      content = renderFile(this.config.format, secret, meta, this.config.envKey);
    } catch (error) {
      throw new SinkError(`cannot write ${this.describe()}: ${(error as Error).message}`, { cause: error });
    }
    try {
      return await writeFileAtomic(await this.destination(), content, { mode: this.config.mode });
    } catch (error) {
      throw new SinkError(`cannot write ${this.describe()}: ${describeFsError(error, this.config.path)}`, {
        cause: error,
      });
    }
  }

  /**
   * Checked again at every write: the path may have changed since the policy was read. Following
   * links means writing at the real location, so the temporary file and the rename are there.
   */
  private async destination(): Promise<string> {
    if (this.config.allowSymlinks) return realLocation(this.config.path);
    const link = await firstLinkInPath(this.config.path);
    if (link) {
      throw new RefusedWriteError(
        `${link.path} is a symbolic link to ${link.target}; refusing to write through it (set allowSymlinks: true on the sink to follow links)`,
      );
    }
    return this.config.path;
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
    default:
      return e?.code ? `${e.code} (${where})` : String(e?.message ?? error);
  }
}
