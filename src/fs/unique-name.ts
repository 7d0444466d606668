import { randomBytes } from 'node:crypto';

/** Random once per process: what tells this process's temporary names from another's. */
const processPart = randomBytes(4).toString('hex');
let counter = 0;

/**
 * Twelve hex digits for a temporary file's name: unique among this process's last 65,536 and, with
 * 32 random bits, all but surely across processes. A clash makes an exclusive create fail, never
 * overwrite. A random draw per file cost more than the rest of naming it.
 */
export function uniqueHex12(): string {
  counter = (counter + 1) & 0xffff;
  return `${processPart}${counter.toString(16).padStart(4, '0')}`;
}
