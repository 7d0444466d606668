import type { SinkType } from '../sink.js';
import { type FileSinkConfig, parseFileSinkConfig } from './file-sink-config.js';

export type { FileSinkConfig };

export const fileSinkType: SinkType<FileSinkConfig> = {
  type: 'file',
  parse: parseFileSinkConfig,
  // The real location, so that two paths to one file (through a link) are one destination.
  target: (config) => `file:${config.realPath}`,
  describe: (config) => `file ${config.displayPath}`,
  localPath: (config) => config.realPath,
  async open() {
    const { fileSinkClient } = await import('./file-client.js');
    return fileSinkClient();
  },
};
