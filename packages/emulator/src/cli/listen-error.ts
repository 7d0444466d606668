import { EmulatorUsageError } from '../usage-error.js';

/**
 * A listener that cannot bind is a usage problem (the address given is taken or not here), named
 * with the option that gave it; undefined for any other error.
 */
export function listenError(error: unknown, option: string, address: string, advice: string): EmulatorUsageError | undefined {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL') return undefined;
  const why = code === 'EADDRINUSE' ? 'the port is in use' : 'no such address on this machine';
  return new EmulatorUsageError([{ path: option, message: `cannot listen on ${address}: ${why}; ${advice}` }]);
}
