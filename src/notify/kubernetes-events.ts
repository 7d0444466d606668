import type { EventIntent, ObjectReference } from '../kubernetes/events/event-types.js';
import { describeDrift } from '../policy/sink-drift.js';
import type { ReloadConfig } from '../reload/registry.js';
import { parseRolloutTarget } from '../reload/rollout/rollout-config.js';
import type { SinkOutcome, TokenOutcome } from '../rotation/outcome.js';
import { scrubSecrets } from '../secret.js';
import { describeKubernetesSecret, type KubernetesSecretSinkConfig } from '../sinks/kubernetes-secret/kubernetes-secret-config.js';
import type { SinkConfig } from '../sinks/registry.js';

/** What of a token's policy its Events are about: where it is delivered, and what is restarted. */
export interface TokenTargets {
  sinks: readonly SinkConfig[];
  reload: readonly ReloadConfig[];
}

/** Whether a policy gives any Event to record: a Kubernetes Secret sink, or a rollout reload. */
export function recordsEvents(tokens: readonly TokenTargets[]): boolean {
  return tokens.some((t) => secretSinksOf(t).length > 0 || t.reload.some((r) => r.type === 'rollout'));
}

const secretSinksOf = (token: TokenTargets) => token.sinks.filter((s): s is KubernetesSecretSinkConfig => s.type === 'kubernetes-secret');

const secretReference = (config: KubernetesSecretSinkConfig): ObjectReference => ({
  apiVersion: 'v1',
  kind: 'Secret',
  namespace: config.namespace,
  name: config.name,
});

/**
 * The Kubernetes Events an outcome gives, as noticesFor gives its notices, decided here without
 * side effects (src/kubernetes/events records them): on each Kubernetes Secret the
 * token is delivered to, what happened to it (`Rotated`, `Repaired`, `VerifyFailed`,
 * `DeliveryFailed`, `RotationRefused` before anything was regenerated, `RotationFailed` after),
 * and on each workload restarted for it (`RolloutRestarted`, `RolloutRestartFailed`). Notes name
 * the token, its ids and what to do; an outcome carries nothing secret, and each note is scrubbed
 * of known secrets all the same.
 */
export function eventsForOutcome(outcome: TokenOutcome, token: TokenTargets): EventIntent[] {
  const secrets = secretSinksOf(token);
  const name = `token '${outcome.name}'`;
  const sinkOf = (config: KubernetesSecretSinkConfig): SinkOutcome | undefined =>
    outcome.sinks.find((s) => s.sink === describeKubernetesSecret(config));
  const onSecrets = (make: (config: KubernetesSecretSinkConfig) => Omit<EventIntent, 'regarding'> | undefined): EventIntent[] =>
    secrets.flatMap((config) => {
      const made = make(config);
      return made ? [{ ...made, regarding: secretReference(config) }] : [];
    });

  let intents: EventIntent[] = [];
  if (outcome.verification?.result === 'failed') {
    const { check, message } = outcome.verification;
    intents = onSecrets(() => ({
      type: 'Warning',
      reason: 'VerifyFailed',
      action: 'Verify',
      note: `${name}: the new token ${outcome.newId ?? ''} delivered here failed verification (${check}): ${message}. Nothing was committed and no workload restarted; the old token ${outcome.oldId} keeps working${outcome.existingTokenExpiresAt ? ` until ${outcome.existingTokenExpiresAt}` : ''}`,
    }));
  } else if (outcome.action === 'rotated') {
    intents = onSecrets((config) => {
      const sink = sinkOf(config);
      if (sink?.result === 'failed') return deliveryFailed(name, outcome, sink);
      return {
        type: 'Normal',
        reason: 'Rotated',
        action: 'Rotate',
        note: `${name} rotated: ${outcome.oldId} -> ${outcome.newId ?? ''}${outcome.newExpiresAt ? `, expires ${outcome.newExpiresAt}` : ''}${outcome.existingTokenExpiresAt ? `; the old token works until ${outcome.existingTokenExpiresAt}` : ''}`,
      };
    });
  } else if (outcome.action === 'redelivered') {
    intents = onSecrets((config) => {
      const sink = sinkOf(config);
      if (sink?.result === 'failed') return deliveryFailed(name, outcome, sink);
      if (sink?.result !== 'created' && sink?.result !== 'updated') return undefined;
      const drift = outcome.drift?.find((d) => d.sink === sink.sink);
      return {
        type: 'Normal',
        reason: 'Repaired',
        action: 'Redeliver',
        note: `${name} (${outcome.oldId}): ${drift ? describeDrift(drift) : 'this Secret lacked the current secret'}; delivered the current secret again, the one token-rotator holds (no new token)`,
      };
    });
  } else if (outcome.action === 'failed') {
    intents = onSecrets((config) => {
      const sink = sinkOf(config);
      if (sink?.result === 'failed') return deliveryFailed(name, outcome, sink);
      return outcome.stage === 'check'
        ? {
            type: 'Warning',
            reason: 'RotationRefused',
            action: 'Rotate',
            note: `${name} not rotated, nothing regenerated: ${outcome.reason}`,
          }
        : { type: 'Warning', reason: 'RotationFailed', action: 'Rotate', note: `${name}: the rotation failed: ${outcome.reason}` };
    });
  }
  return [...intents, ...reloadEvents(outcome, name, secrets[0])].map((intent) => ({ ...intent, note: scrubSecrets(intent.note) }));
}

function deliveryFailed(name: string, outcome: TokenOutcome, sink: SinkOutcome): Omit<EventIntent, 'regarding'> {
  return {
    type: 'Warning',
    reason: 'DeliveryFailed',
    action: 'Deliver',
    note: `${name}: could not deliver the ${outcome.newId ? `new token ${outcome.newId}` : 'current secret'} here: ${sink.error ?? outcome.reason}; the next run delivers it again without a new token`,
  };
}

/** On each workload a rollout reload restarted (or could not), the Secret that caused it as `related`. */
function reloadEvents(outcome: TokenOutcome, name: string, secret: KubernetesSecretSinkConfig | undefined): EventIntent[] {
  return (outcome.reloads ?? []).flatMap((reload): EventIntent[] => {
    const workload = parseRolloutTarget(reload.target);
    if (!workload || (reload.result !== 'restarted' && reload.result !== 'failed')) return [];
    const regarding: ObjectReference = { apiVersion: 'apps/v1', ...workload };
    const related = secret ? { related: secretReference(secret) } : {};
    const why = outcome.action === 'rotated' ? `${name} was rotated to ${outcome.newId ?? ''}` : `${name} was delivered again`;
    return reload.result === 'restarted'
      ? [{ regarding, ...related, type: 'Normal', reason: 'RolloutRestarted', action: 'Restart', note: `restarted: ${why}` }]
      : [
          {
            regarding,
            ...related,
            type: 'Warning',
            reason: 'RolloutRestartFailed',
            action: 'Restart',
            note: `not restarted after ${why}: ${reload.message ?? 'failed'}; restart it by hand`,
          },
        ];
  });
}
