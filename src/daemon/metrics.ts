import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

import { ApiError, type ApiOperation, LockLostError } from '../errors.js';
import { type DriftFinding, isRepairable } from '../policy/sink-drift.js';
import type { ReloadOutcome, TokenOutcome, VerificationOutcome } from '../rotation/outcome.js';
import type { WriteResult } from '../sinks/sink.js';
import { packageVersion } from '../version.js';
import { TokenSeries } from './token-series.js';

const seconds = (iso: string) => Date.parse(iso) / 1000;
const valuesOf = <K extends string>(record: Record<K, true>) => Object.keys(record) as K[];

/**
 * What one check of a name came to, as `token_rotator_checks_total` counts it: `success` (checked,
 * rotated or not), `failure`, `token_not_found` (the service answered 404 for its id: deleted, or
 * the wrong id; nothing a retry fixes), `interrupted` (the rotator was stopped), `backoff` (not
 * checked: failing recently), `busy` (another rotator holds the name).
 */
export const CHECK_RESULTS = valuesOf({
  success: true,
  failure: true,
  token_not_found: true,
  interrupted: true,
  backoff: true,
  busy: true,
});
export type CheckResult = (typeof CHECK_RESULTS)[number];
/** Rotations begun (a regenerate sent, or an unfinished one taken up), by how they ended. */
export const ROTATION_RESULTS = valuesOf({ success: true, failure: true, interrupted: true });
const SINK_WRITE_RESULTS = valuesOf<WriteResult | 'failed'>({ created: true, updated: true, unchanged: true, failed: true });
const DRIFT_KINDS = valuesOf<DriftFinding['kind']>({
  missing: true,
  foreign: true,
  new: true,
  unreadable: true,
  unowned: true,
  unmarked: true,
});
const VERIFICATION_RESULTS = valuesOf<VerificationOutcome['result']>({ passed: true, failed: true, skipped: true });
const RELOAD_RESULTS = valuesOf<ReloadOutcome['result']>({ restarted: true, notified: true, skipped: true, failed: true });

/** What the metrics need to know of a token of the policy: its name, its sinks' and reloads' labels. */
export interface TrackedToken {
  name: string;
  sinks: string[];
  reloads: string[];
}

export function checkResult(outcome: TokenOutcome): CheckResult {
  if (outcome.check === 'backoff') return 'backoff';
  if (outcome.check === 'busy') return 'busy';
  if (outcome.action === 'interrupted') return 'interrupted';
  if (outcome.action !== 'failed') return 'success';
  const notFound = outcome.stage !== 'rotation' && outcome.error?.code === ApiError.code && outcome.error.status === 404;
  return notFound ? 'token_not_found' : 'failure';
}

function rotationResult(outcome: TokenOutcome): (typeof ROTATION_RESULTS)[number] | undefined {
  if (outcome.action === 'rotated') return 'success';
  if (outcome.stage !== 'rotation') return undefined;
  return outcome.action === 'interrupted' ? 'interrupted' : outcome.action === 'failed' ? 'failure' : undefined;
}

/** The daemon's Prometheus metrics, fed from outcomes and API answers; never a secret in a label. */
export function createMetrics(build: { version: string; node: string } = { version: packageVersion(), node: process.version }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const series = new TokenSeries();
  const buildInfo = new Gauge({
    name: 'token_rotator_build_info',
    help: 'Always 1: the version of token-rotator and of Node.js that run.',
    labelNames: ['version', 'node'],
    registers,
  });
  buildInfo.set(build, 1);
  const expiry = new Gauge({
    name: 'token_rotator_token_expiry_timestamp_seconds',
    help: 'When the current token of a name expires, as last retrieved (absent: never expires, or not retrieved yet).',
    labelNames: ['token'],
    registers,
  });
  const nextCheck = new Gauge({
    name: 'token_rotator_next_check_timestamp_seconds',
    help: 'When the next scheduled check of a name runs.',
    labelNames: ['token'],
    registers,
  });
  const checks = new Counter({
    name: 'token_rotator_checks_total',
    help: 'Checks of a name, by result (success, failure, token_not_found, interrupted, backoff, busy).',
    labelNames: ['token', 'result'],
    registers,
  });
  const rotations = new Counter({
    name: 'token_rotator_rotations_total',
    help: 'Rotations begun (regenerate sent or an unfinished one taken up), by result (success, failure, interrupted).',
    labelNames: ['token', 'result'],
    registers,
  });
  const lastCheck = new Gauge({
    name: 'token_rotator_last_successful_check_timestamp_seconds',
    help: 'When a check of a name last succeeded, whether it rotated or found nothing due.',
    labelNames: ['token'],
    registers,
  });
  const lastRotation = new Gauge({
    name: 'token_rotator_last_rotation_timestamp_seconds',
    help: "When a name was last rotated (committed), from its state record at start and then from this process's rotations.",
    labelNames: ['token'],
    registers,
  });
  const failures = new Gauge({
    name: 'token_rotator_consecutive_failures',
    help: 'Failed checks or rotations of a name in a row (its state record at start); 0 after a success. Backoff follows it.',
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
    help: 'Checks that found a sink not holding the current secret (missing, foreign, new, unreadable, unowned, unmarked), repaired or not.',
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
  const verifications = new Counter({
    name: 'token_rotator_verifications_total',
    help: 'Verifications of a new token before commit, by result (passed, failed, skipped).',
    labelNames: ['token', 'result'],
    registers,
  });
  const verificationWarnings = new Counter({
    name: 'token_rotator_verification_warnings_total',
    help: 'New tokens that passed verification but differ from what was asked, by kind (expiry: another expiry, or none).',
    labelNames: ['token', 'kind'],
    registers,
  });
  const apiRequests = new Counter({
    name: 'token_rotator_api_requests_total',
    help: 'Requests to the token service, by operation and status (error: no answer).',
    labelNames: ['op', 'status'],
    registers,
  });

  /** Every per-token series of a name, counters at 0: alerts on `increase()` see its first event. */
  function start(token: TrackedToken): void {
    const name = token.name;
    for (const result of CHECK_RESULTS) series.zero(checks, { token: name, result });
    for (const result of ROTATION_RESULTS) series.zero(rotations, { token: name, result });
    series.zero(orphans, { token: name });
    for (const result of VERIFICATION_RESULTS) series.zero(verifications, { token: name, result });
    series.zero(verificationWarnings, { token: name, kind: 'expiry' });
    series.set(pending, { token: name }, 0);
    series.set(failures, { token: name }, 0);
    for (const sink of token.sinks) {
      for (const result of SINK_WRITE_RESULTS) series.zero(sinkWrites, { token: name, sink, result });
      for (const kind of DRIFT_KINDS) series.zero(driftFound, { token: name, sink, kind });
      series.set(sinkDrift, { token: name, sink }, 0);
    }
    for (const target of token.reloads) for (const result of RELOAD_RESULTS) series.zero(reloads, { token: name, target, result });
  }

  return {
    registry,
    /**
     * The tokens of the policy in force, at start and after each reload: a new name's series start at
     * 0, a departed name's go away (so dashboards do not show a ghost), and new sinks of a kept name
     * get theirs. `keep`: names outside the policy that still have series of their own (strays).
     */
    track(tokens: readonly TrackedToken[], keep: readonly string[] = []) {
      const names = new Set([...tokens.map((t) => t.name), ...keep]);
      for (const token of series.tokens()) if (!names.has(token)) this.forget(token);
      for (const token of tokens) start(token);
    },
    /** What a name's state record says, before this process checked it. */
    seed(token: string, record: { lastRotatedAt: string | null; consecutiveFailures: number }) {
      if (record.lastRotatedAt) series.set(lastRotation, { token }, seconds(record.lastRotatedAt));
      series.set(failures, { token }, record.consecutiveFailures);
    },
    observeApi(op: ApiOperation, status: number | 'error') {
      apiRequests.inc({ op, status: String(status) });
    },
    setClockSkew(offsetMs: number) {
      clockSkew.set(offsetMs / 1000);
    },
    setPending(token: string, count: number) {
      series.set(pending, { token }, count);
    },
    setNextCheck(token: string, at: Date | null) {
      if (at) series.set(nextCheck, { token }, at.getTime() / 1000);
      else series.remove(nextCheck, { token });
    },
    observeOutcome(outcome: TokenOutcome, now: Date) {
      const token = outcome.name;
      const result = checkResult(outcome);
      series.inc(checks, { token, result });
      const rotation = rotationResult(outcome);
      if (rotation) series.inc(rotations, { token, result: rotation });
      if (outcome.action === 'rotated') series.set(lastRotation, { token }, now.getTime() / 1000);
      // What backoff counts (`rotate-token.ts` recordAttempt): failures, not a stop or another holder.
      if (result === 'success') series.set(failures, { token }, 0);
      else if ((result === 'failure' || result === 'token_not_found') && outcome.error?.code !== LockLostError.code) {
        series.inc(failures, { token });
      }

      const currentExpiry = outcome.action === 'rotated' ? outcome.newExpiresAt : outcome.expiresAt;
      if (currentExpiry) series.set(expiry, { token }, seconds(currentExpiry));
      else if (currentExpiry === null && result === 'success') series.remove(expiry, { token });
      if (result === 'success') series.set(lastCheck, { token }, now.getTime() / 1000);

      for (const sink of outcome.sinks) series.inc(sinkWrites, { token, sink: sink.sink, result: sink.result });
      if (outcome.orphans.length) series.inc(orphans, { token }, outcome.orphans.length);
      if (outcome.verification) series.inc(verifications, { token, result: outcome.verification.result });
      if (outcome.verification?.result === 'passed' && outcome.verification.warnings?.length) {
        series.inc(verificationWarnings, { token, kind: 'expiry' });
      }
      // A stopped check may not have looked at the staged secret: what it does not know is kept.
      if (result !== 'interrupted' || outcome.pending) series.set(pending, { token }, outcome.pending?.length ?? 0);
      for (const finding of outcome.drift ?? []) series.inc(driftFound, { token, sink: finding.sink, kind: finding.kind });
      // Skipped for backoff, a busy lock or a stop: the sinks were not looked at, so nothing is known anew.
      if (result !== 'backoff' && result !== 'busy' && result !== 'interrupted') {
        const repaired = outcome.action === 'rotated' || outcome.action === 'redelivered';
        const now = new Set((outcome.drift ?? []).filter((d) => !isRepairable(d) || !repaired).map((d) => d.sink));
        for (const sink of drifted.get(token) ?? []) if (!now.has(sink)) series.set(sinkDrift, { token, sink }, 0);
        for (const sink of now) series.set(sinkDrift, { token, sink }, 1);
        drifted.set(token, now);
      }
    },
    observeReloads(outcome: TokenOutcome) {
      for (const reload of outcome.reloads ?? [])
        series.inc(reloads, { token: outcome.name, target: reload.target, result: reload.result });
    },
    /** A name left the policy (or a stray was finished): every series of it goes. */
    forget(token: string) {
      series.forget(token);
      drifted.delete(token);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
