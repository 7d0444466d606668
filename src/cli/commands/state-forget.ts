import { systemClock } from '../../clock.js';
import { ConfigError, NameLockedError, StateError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { findStrayEntries } from '../../rotation/stray-entries.js';
import { openStateBackend, type StateBackendName } from '../../state/backends/registry.js';
import { decideForget, type Saved } from '../../state/forget.js';
import { confirm } from '../confirm.js';
import { type CliIo, EXIT } from '../io.js';
import { type GlobalOptions, loadRuntime } from '../load-runtime.js';
import { unknownNameIssue } from '../token-names.js';

export interface ForgetOptions extends GlobalOptions {
  yes?: boolean;
}

/** Read as it is stored, without the state key: only its plain fields are looked at, and a damaged one is named. */
async function saved<T>(read: () => Promise<T | undefined>): Promise<Saved<T>> {
  try {
    const found = await read();
    return found === undefined ? { none: true } : { found };
  } catch (error) {
    return { unreadable: (error as Error).message };
  }
}

/**
 * Resets one name's saved state (its record and journal entry) under its lock, after a
 * confirmation: the next run starts it again from the policy's id. Refused while a new secret is
 * held that no run has delivered. Works for a name no longer in the policy. Never prints a secret.
 */
export async function stateForgetCommand(name: string, options: ForgetOptions, io: CliIo): Promise<number> {
  // Asked before anything is read: a script without --yes is refused as a usage error.
  if (!options.yes && !io.stdin?.isTTY) {
    throw new ConfigError([{ path: 'state forget', message: 'asks for confirmation on a terminal; add --yes to forget without asking' }]);
  }
  const { settings, policy, env } = await loadRuntime(options, io);
  const logger = createLogger({ level: settings.logLevel });
  // The backend itself: a document the key does not authenticate (or no key) must not stop its removal.
  const backend = await openStateBackend(settings.stateBackend as StateBackendName, {
    dir: settings.stateDir,
    env,
    clock: systemClock,
    logger,
  });
  const acquired = await backend.locks.acquire(name, { waitMs: 0 });
  if ('busy' in acquired) {
    const who = acquired.busy ? ` (${acquired.busy.who}, since ${acquired.busy.since})` : '';
    throw new NameLockedError(`'${name}' is being rotated by another process${who}: nothing was forgotten; try again once it has finished`);
  }
  const lock = acquired.held;
  try {
    const [record, entry] = await Promise.all([saved(() => backend.state.read(name)), saved(() => backend.journal.read(name))]);
    const policyId = policy.tokens.find((t) => t.name === name)?.id;
    const decision = decideForget(name, policyId, record, entry);
    if (decision.kind === 'nothing') {
      // Nothing saved under a name the policy does not know either: most likely a typo, not a done job.
      if (policyId === undefined) {
        const known = [...policy.tokens.map((t) => t.name), ...(await findStrayEntries(policy, backend.journal)).map((s) => s.name)];
        throw new ConfigError([unknownNameIssue('state forget', name, known, 'the policy or the journal')]);
      }
      io.stdout.write(`nothing saved for ${name} in ${backend.describe()}\n`);
      return EXIT.ok;
    }
    if (decision.kind === 'refuse') throw new StateError(`not forgetting '${name}': ${decision.why}`);
    if (!options.yes) {
      const question = `Forget the saved state of ${name} in ${backend.describe()}? This loses:\n${decision.loses.map((l) => `  - ${l}\n`).join('')}[y/N] `;
      if (!(await confirm(io, question))) {
        io.stderr.write('nothing done\n');
        return EXIT.ok;
      }
    }
    await lock.assertHeld();
    await backend.journal.erase(name);
    await backend.state.erase(name);
    logger.warn({ token: name, state: backend.describe() }, 'saved state forgotten by hand');
    io.stdout.write(`forgot ${name}: its record and journal entry are gone from ${backend.describe()}\n`);
    return EXIT.ok;
  } finally {
    await lock.release();
  }
}
