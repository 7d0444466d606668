/** Examples and exit codes: the text after the emulator's options in `--help`. */
export function emulatorHelp(): string {
  return [
    '',
    'Examples:',
    '  token-rotator-emulator --port 18464 --seed seed.yaml --env-out emulator.env',
    '  token-rotator once --dotenv emulator.env',
    '',
    'Exit codes:',
    '  0  stopped by Ctrl-C or SIGTERM',
    '  2  usage error, such as a port in use',
  ].join('\n');
}
