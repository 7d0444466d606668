import { open, writeSync } from 'node:fs';

/**
 * A new file (`wx`: fails if the name exists) as a plain descriptor, opened on the thread pool:
 * lighter than a FileHandle for a write of a few bytes, which is then made synchronously.
 */
export function openExclusive(path: string, mode: number): Promise<number> {
  return new Promise((resolve, reject) => open(path, 'wx', mode, (error, fd) => (error ? reject(error) : resolve(fd))));
}

/** Writes every byte: one write(2) may take fewer than it was given. */
export function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
}
