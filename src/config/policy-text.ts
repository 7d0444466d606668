import { createReadStream } from 'node:fs';

import { ConfigError, type ConfigIssue } from '../errors.js';

/**
 * A policy is a few kilobytes; 16 MiB leaves room for thousands of tokens and still keeps a wrong
 * file (a log, a disk image, /dev/zero) from being read into memory and parsed.
 */
export const MAX_POLICY_BYTES = 16 * 1024 * 1024;

/** The issue for text that is too big, or undefined; `where` is the file as the user named it. */
export function policySizeIssue(text: string, where: string): ConfigIssue | undefined {
  return Buffer.byteLength(text, 'utf8') > MAX_POLICY_BYTES ? tooBig(where) : undefined;
}

/**
 * The file's text, read no further than one byte past the limit: its size is not trusted beforehand,
 * as a device or a pipe has none and a file can grow while it is read.
 */
export async function readPolicyText(path: string, file: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of createReadStream(file, { end: MAX_POLICY_BYTES })) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
    throw new ConfigError([{ path, message: `cannot read policy file: ${why}` }]);
  }
  if (size > MAX_POLICY_BYTES) throw new ConfigError([tooBig(path)]);
  return Buffer.concat(chunks).toString('utf8');
}

function tooBig(where: string): ConfigIssue {
  return {
    path: where,
    message: `a policy file may be at most 16 MiB (${MAX_POLICY_BYTES} bytes); this one is bigger, so it was not parsed`,
  };
}
