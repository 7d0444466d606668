import { EXIT } from '../io.js';

/**
 * What each exit code means, by its name in EXIT: the codes themselves are read from EXIT at run
 * time, and the compiler refuses a code added there without a line here.
 */
const MEANINGS = {
  ok: 'done: every due token was rotated and delivered, or none was due',
  failed: 'some token failed or needs attention (each one is named); the others were still processed',
  usage: 'usage or configuration error, found before any network call; every problem is listed with its path',
  dependency:
    'nothing could be checked: the token service or the authorization server is unreachable, refused the credentials, or is not at the configured address (a wrong issuer or API path)',
  interrupted: 'stopped by SIGINT (Ctrl-C): work in flight was finished or interrupted, not failed; the next run takes it up',
  terminated: 'stopped by SIGTERM (a pod evicted, a CronJob deadline): as for SIGINT',
} satisfies Record<keyof typeof EXIT, string>;

/** The "Exit codes:" block of a command's help; `notes` adds what a code means for that command. */
export function exitCodesHelp(notes: Partial<Record<keyof typeof EXIT, string>> = {}, only?: ReadonlyArray<keyof typeof EXIT>): string {
  const rows = (Object.entries(EXIT) as Array<[keyof typeof EXIT, number]>)
    .filter(([name]) => !only || only.includes(name))
    .sort(([, a], [, b]) => a - b)
    .map(([name, code]) => `  ${code}  ${notes[name] ?? MEANINGS[name]}`);
  return ['Exit codes:', ...rows].join('\n');
}
