import type { Reference } from '../common/reference.js';
import type { ConfigIssue } from '../errors.js';
import { rotatorCredentialVariable, variableOfFile } from '../sinks/exec/credential-variables.js';
import type { Policy } from './types.js';

/**
 * An exec sink's passEnv naming a variable that another part of the policy takes a credential from
 * (a Vault sink's `tokenFrom` or `secretIdFrom`, a webhook's `secretFrom` or `urlFrom`, a
 * notification's `urlFrom`), or the `_FILE` the rotator would read it from: refused, naming both
 * places. `references` carry their full paths. What the sink's own check refuses already (every
 * `ROTATOR_*`, the vendors' credentials) is not said twice.
 */
export function passEnvReferenceIssues(policy: Policy, references: readonly Reference[]): ConfigIssue[] {
  const all = [...references, ...policy.notifications.map((n, i) => ({ path: `notifications[${i}].urlFrom`, variable: n.urlFrom }))];
  const byVariable = new Map<string, string>();
  for (const { path, variable } of all) if (!byVariable.has(variable)) byVariable.set(variable, path);
  return policy.tokens.flatMap((token, t) =>
    token.sinks.flatMap((sink, s) =>
      sink.type !== 'exec'
        ? []
        : sink.passEnv.flatMap((name, p) => {
            if (rotatorCredentialVariable(name)) return [];
            const direct = byVariable.get(name);
            const base = variableOfFile(name);
            const viaFile = base === undefined ? undefined : byVariable.get(base);
            const why = direct
              ? `${name} is the credential ${direct} takes`
              : viaFile
                ? `${name} names the file of ${base}, the credential ${viaFile} takes`
                : undefined;
            return why ? [{ path: `tokens[${t}].sinks[${s}].passEnv[${p}]`, message: `${why}: never passed to a program` }] : [];
          }),
    ),
  );
}
