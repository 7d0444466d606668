// `token-rotator-emulator`: the token service double, as its own program. Not in the container image.
import { Command } from 'commander';

import { defineEmulatorCommand } from './cli/emulator-program.js';
import { emulatorHelp } from './cli/help.js';
import { reportError } from './cli/report-error.js';

const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
let code = 0;
const program = defineEmulatorCommand(new Command('token-rotator-emulator'), io, (exitCode) => (code = exitCode))
  .addHelpText('after', emulatorHelp())
  .showHelpAfterError()
  .exitOverride()
  .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
try {
  await program.parseAsync(process.argv.slice(2), { from: 'user' });
} catch (error) {
  code = reportError(error, io);
}
process.stdout.write('', () => process.exit(code));
