import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

import type { ApiOperation } from '../errors.js';
import { isRepairable } from '../policy/sink-drift.js';
import type { TokenOutcome } from '../rotation/outcome.js';

const seconds = (iso: string) => Date.parse(iso) / 1000;

/** The daemon's Prometheus metrics, fed from outcomes and API answers; never a secret in a label. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const expiry = new Gauge({
    name: 'token_rotator_token_expiry_timestamp_seconds',
    help: 'When the current token of a name expires (absent: never).',
    labelNames: ['token'],
    registers,
  });
  const nextCheck = new Gauge({
    name: 'token_rotator_next_check_timestamp_seconds',
    help: 'When the next scheduled check of a name runs.',
    labelNames: ['token'],
    registers,
  });
  const rotations = new Counter({
    name: 'token_rotator_rotations_total',
    help: 'Rotations attempted, by result (success, failure).',
    labelNames: ['token', 'result'],
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'token_rotator_last_success_timestamp_seconds',
    help: 'When a check or rotation of a name last succeeded.',
    labelNames: ['token'],
    registers,
  });
  const sinkWrites = new Counter({
    name: 'token_rotator_sink_writes_total',
    help: 'Sink writes, by result (created, updated, unchanged, failed).',
    labelNames: ['token', 'sink', 'result'],
    registers,
  });
  const orphans = new Counter({
    name: 'token_rotator_orphaned_tokens_total',
    help: 'Tokens the service created whose secret was lost (reported each).',
    labelNames: ['token'],
    registers,
  });
  const pending = new Gauge({
    name: 'token_rotator_pending_deliveries',
    help: 'Sinks still waiting for a staged secret.',
    labelNames: ['token'],
    registers,
  });
  const sinkDrift = new Gauge({
    name: 'token_rotator_sink_drift',
    help: 'Whether a sink is left without the current secret after the last check (1): drift that was reported, not repaired.',
    labelNames: ['token', 'sink'],
    registers,
  });
  const driftFound = new Counter({
    name: 'token_rotator_sink_drift_detected_total',
    help: 'Checks that found a sink not holding the current secret (missing, another secret, new, unreadable), repaired or not.',
    labelNames: ['token', 'sink', 'kind'],
    registers,
  });
  /** The sinks each token last had drift on, so that a repaired one goes back to 0. */
  const drifted = new Map<string, Set<string>>();
  const clockSkew = new Gauge({
    name: 'token_rotator_clock_skew_seconds',
    help: "The token service's clock minus this machine's, from the Date header of its latest answer.",
    registers,
  });
  const reloads = new Counter({
    name: 'token_rotator_reloads_total',
    help: 'Reloads after a rotation (restarted, notified, skipped, failed), by target: a failed one is not repeated.',
    labelNames: ['token', 'target', 'result'],
    registers,
  });
  const apiRequests = new Counter({
    name: 'token_rotator_api_requests_total',
    help: 'Requests to the token service, by operation and status (error: no answer).',
    labelNames: ['op', 'status'],
    registers,
  });

  return {
    registry,
    observeApi(op: ApiOperation, status: number | 'error') {
      apiRequests.inc({ op, status: String(status) });
    },
    setClockSkew(offsetMs: number) {
      clockSkew.set(offsetMs / 1000);
    },
    setPending(token: string, count: number) {
      pending.set({ token }, count);
    },
    setNextCheck(token: string, at: Date | null) {
      if (at) nextCheck.set({ token }, at.getTime() / 1000);
      else nextCheck.remove({ token });
    },
    observeOutcome(outcome: TokenOutcome, now: Date) {
      const token = outcome.name;
      const currentExpiry = outcome.action === 'rotated' ? outcome.newExpiresAt : outcome.expiresAt;
      if (currentExpiry) expiry.set({ token }, seconds(currentExpiry));
      else if (currentExpiry === null && outcome.action !== 'failed') expiry.remove({ token });
      if (outcome.action === 'rotated') rotations.inc({ token, result: 'success' });
      if (outcome.action === 'failed') rotations.inc({ token, result: 'failure' });
      // Skipped for backoff or another holder is not a success: nothing reached the service.
      else if (outcome.check !== 'backoff' && outcome.check !== 'busy') lastSuccess.set({ token }, now.getTime() / 1000);
      for (const sink of outcome.sinks) sinkWrites.inc({ token, sink: sink.sink, result: sink.result });
      if (outcome.orphans.length) orphans.inc({ token }, outcome.orphans.length);
      pending.set({ token }, outcome.pending?.length ?? 0);
      // Skipped for backoff or a busy lock: the sinks were not looked at, so nothing is known anew.
      for (const finding of outcome.drift ?? []) driftFound.inc({ token, sink: finding.sink, kind: finding.kind });
      if (outcome.check !== 'backoff' && outcome.check !== 'busy') {
        const now = new Set((outcome.drift ?? []).filter((d) => !isRepairable(d) || outcome.action !== 'rotated').map((d) => d.sink));
        for (const sink of drifted.get(token) ?? []) if (!now.has(sink)) sinkDrift.set({ token, sink }, 0);
        for (const sink of now) sinkDrift.set({ token, sink }, 1);
        drifted.set(token, now);
      }
    },
    observeReloads(outcome: TokenOutcome) {
      for (const reload of outcome.reloads ?? []) reloads.inc({ token: outcome.name, target: reload.target, result: reload.result });
    },
    /** A name left the policy: its series go too, so dashboards do not show a ghost. */
    forget(token: string) {
      for (const metric of [expiry, nextCheck, lastSuccess, pending]) metric.remove({ token });
      for (const sink of drifted.get(token) ?? []) sinkDrift.remove({ token, sink });
      drifted.delete(token);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
