/**
 * The oldest Node.js the emulator runs on; its package.json's `engines.node` says the same (a test
 * holds the two equal). An older Node fails inside the program's imports with a stack trace that
 * names neither the Node found nor the one needed. The emulator's own copy of the product's check:
 * the packages import nothing of the product.
 */
export const MINIMUM_NODE = { major: 22, minor: 12 } as const;

/**
 * The one line an unsupported Node gets, or undefined when `version` (as `process.version`) is
 * supported. Pure, so that it can be tested for any version on the Node that runs the tests.
 */
export function unsupportedNodeMessage(program: string, version: string, execPath: string): string | undefined {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  const { major: needMajor, minor: needMinor } = MINIMUM_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `${program}: needs Node.js >= ${needMajor}.${needMinor}, found ${version} (${execPath})`;
}

/**
 * The bin's first step (see main.ts): says which Node is needed and sets exit code 2 when this one is
 * too old, so that main.ts loads nothing more. This module imports nothing and uses nothing newer
 * than Node 18 has, so that it runs where the rest of the program cannot.
 */
export function runsOnThisNode(program: string): boolean {
  const message = unsupportedNodeMessage(program, process.version, process.execPath);
  if (message === undefined) return true;
  process.stderr.write(`${message}\n`);
  process.exitCode = 2;
  return false;
}
