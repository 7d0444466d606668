import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { Secret } from '../../src/secret.js';
import { FILE_FORMATS, type FileFormat } from '../../src/sinks/file/file-format.js';
import { type FileSinkConfig, fileSinkType } from '../../src/sinks/file/file-sink.js';
import { sinkContract } from '../contracts/sink-contract.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The secret as someone else would have put it there: by hand, with no metadata of ours. */
function foreignContent(config: FileSinkConfig, secret: Secret): string {
  switch (config.format) {
    case 'raw':
      return secret.reveal();
    case 'env':
      return `# written by hand\nOTHER_SETTING=1\n${config.envKey}=${secret.reveal()}\n`;
    case 'json':
      return `${JSON.stringify({ token: secret.reveal() }, null, 2)}\n`;
  }
}

const extension: Record<FileFormat, string> = { raw: 'token', env: 'env', json: 'json' };

for (const format of FILE_FORMATS) {
  sinkContract(`file (${format})`, { ownership: 'adopts', preflight: true }, async () => {
    // The temporary folder itself may be reached through a link (macOS: /var -> /private/var).
    const dir = await realpath(await makeTempDir());
    let count = 0;
    return {
      type: fileSinkType,
      // The file sink takes no credentials: no reference is ever set.
      context: { env: {}, reference: () => undefined },
      // Raw and env files have nowhere to put a mark: what is there is adopted.
      config() {
        count += 1;
        // In a folder of its own, which does not exist yet, so that a file can be put in its way.
        const parsed = fileSinkType.parse({ type: 'file', path: `sinks-${count}/app.${extension[format]}`, format }, { policyDir: dir });
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
        return parsed.config;
      },
      carriesMetadata: (config) => config.format === 'json',
      async plantForeign(config, secret) {
        await mkdir(dirname(config.path), { recursive: true });
        await writeFile(config.path, foreignContent(config, secret), { mode: 0o600 });
      },
      async breakDestination(config) {
        // A file where the sink's folder must be: refused even to root, who ignores permissions.
        await writeFile(dirname(config.path), 'a file where a folder must be');
      },
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  });
}
