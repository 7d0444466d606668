import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A user's push program, as the exec sink runs it: `push.mjs --dest FILE` stores its stdin in FILE
 * (and says `unchanged` when FILE already holds exactly that), `push.mjs --read FILE` prints it.
 * It records its argv and environment beside FILE, so tests can see what it was given; `--fail`
 * echoes its stdin to stderr and exits 1, `--sleep MS` hangs first, `--check FILE` exits 2 when a
 * write to FILE could not work.
 */
export async function writePushProgram(dir: string): Promise<string> {
  const path = join(dir, 'push.mjs');
  await writeFile(
    path,
    `#!${process.execPath}
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
const at = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const dest = at('--dest') ?? at('--read') ?? at('--check');
if (at('--sleep')) await new Promise((r) => setTimeout(r, Number(at('--sleep'))));
writeFileSync(dest + '.seen', JSON.stringify({ argv: process.argv, env: process.env }));
if (args.includes('--check')) {
  // Could a write work? Not when a folder stands where the file must be.
  const { statSync } = await import('node:fs');
  if (existsSync(dest) && statSync(dest).isDirectory()) {
    process.stderr.write(dest + ' is a folder\\n');
    process.exit(2);
  }
  process.exit(0);
}
if (args.includes('--read')) {
  if (existsSync(dest)) process.stdout.write(readFileSync(dest));
  process.exit(0);
}
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks).toString('utf8');
if (args.includes('--fail')) {
  process.stderr.write('could not push: ' + input + '\\n');
  process.exit(1);
}
if (existsSync(dest) && readFileSync(dest, 'utf8') === input) {
  console.log('unchanged');
} else {
  const existed = existsSync(dest);
  writeFileSync(dest, input, { mode: 0o600 });
  console.log(existed ? 'updated' : 'created');
}
`,
  );
  await chmod(path, 0o755);
  return path;
}
