// SHA256SUMS in the format of coreutils' sha256sum, so that `sha256sum -c SHA256SUMS` checks a
// downloaded release folder.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const CHECKSUMS_FILE = 'SHA256SUMS';

/** Writes DIR/SHA256SUMS over every other file in DIR, sorted by name. @param {string} dir */
export async function writeChecksums(dir) {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name !== CHECKSUMS_FILE)
    .map((entry) => entry.name)
    .sort();
  const lines = [];
  for (const name of names)
    lines.push(
      `${createHash('sha256')
        .update(await readFile(join(dir, name)))
        .digest('hex')}  ${name}\n`,
    );
  await writeFile(join(dir, CHECKSUMS_FILE), lines.join(''));
}
