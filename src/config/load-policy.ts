import { dirname, resolve } from 'node:path';

import { fromZodIssues } from '../common/config-issues.js';
import { formatDuration } from '../common/duration.js';
import type { Env } from '../common/env-variables.js';
import { yamlValue } from '../common/yaml-value.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import type { RotationSettings } from '../policy/rotation-settings.js';
import { isReloadType, type ReloadConfig, reloadTypes } from '../reload/registry.js';
import type { ReloadParseContext } from '../reload/reload.js';
import { isSinkType, sinkTypes } from '../sinks/registry.js';
import type { SinkParseContext } from '../sinks/sink.js';
import type { VerifyProbe } from '../verify/verify-config.js';
import { type DestinationClash, destinationClashes, type PlacedSink } from './destination-clashes.js';
import { policySchema, type RawSettings, settingsShape } from './policy-schema.js';
import { policySizeIssue, readPolicyText } from './policy-text.js';
import type { CheckSchedule, Policy, TokenPolicy } from './types.js';

export const DEFAULT_SCHEDULE: CheckSchedule = { expression: '*/15 * * * *', timezone: undefined, jitterMs: 0 };

export const BUILT_IN_DEFAULTS: RotationSettings = {
  renewBefore: { kind: 'duration', ms: 7 * 24 * 3600_000 },
  overlapMs: 3600_000,
  lifetimeMs: 30 * 24 * 3600_000,
  // Not set: a token that never expires still gets the default maxAge (see decide.ts).
  maxAgeMs: undefined,
  onDrift: 'redeliver',
};

/** What a policy is read against: the environment, where sink types find their defaults (a namespace). */
export interface PolicyContext {
  env?: Env;
}

/** Reads and checks a policy file; every problem is collected and thrown together as a ConfigError. */
export async function loadPolicy(path: string, context: PolicyContext = {}): Promise<Policy> {
  const file = resolve(path);
  return parsePolicy(await readPolicyText(path, file), file, context);
}

export function parsePolicy(text: string, file: string, context: PolicyContext = {}): Policy {
  const tooBig = policySizeIssue(text, file);
  if (tooBig) throw new ConfigError([tooBig]);
  const raw = yamlValue(text, file);
  const parsed = policySchema.safeParse(raw, { reportInput: true });
  const issues: ConfigIssue[] = parsed.success ? [] : fromZodIssues(parsed.error.issues);
  // Sinks are checked even when the rest is malformed, so one run reports every problem.
  const rawTokens = (raw as { tokens?: unknown })?.tokens;
  const sinksByToken = Array.isArray(rawTokens)
    ? rawTokens.map((token, index) =>
        parseSinks((token as { sinks?: unknown })?.sinks, `tokens[${index}]`, { policyDir: dirname(file), env: context.env ?? {} }, issues),
      )
    : [];
  const reloadContext = { env: context.env ?? {} };
  const defaultReload = parseReloads(
    (raw as { defaults?: { reload?: unknown } })?.defaults?.reload,
    'defaults.reload',
    reloadContext,
    issues,
  );
  const reloadByToken = Array.isArray(rawTokens)
    ? rawTokens.map((token, index) =>
        parseReloads((token as { reload?: unknown })?.reload, `tokens[${index}].reload`, reloadContext, issues),
      )
    : [];
  // The checks across fields run on every part that is valid alone, so one run reports every
  // problem, not field errors first and duplicates only once those are fixed.
  const rawDefaults = (raw as { defaults?: unknown })?.defaults;
  const lenientDefaults = lenientSettings(rawDefaults === undefined ? {} : rawDefaults);
  const defaults = mergeSettings(BUILT_IN_DEFAULTS, lenientDefaults.values);
  const seenNames = new Map<string, number>();
  const seenIds = new Map<string, number>();
  (Array.isArray(rawTokens) ? rawTokens : []).forEach((rawToken: unknown, index) => {
    const at = `tokens[${index}]`;
    const token = isMapping(rawToken) ? rawToken : {};
    if (typeof token.name === 'string') {
      const firstWithName = seenNames.get(token.name);
      if (firstWithName !== undefined)
        issues.push({ path: `${at}.name`, message: `'${token.name}' is already used by tokens[${firstWithName}]; names must be unique` });
      else seenNames.set(token.name, index);
    }
    if (typeof token.id === 'string') {
      const firstWithId = seenIds.get(token.id);
      if (firstWithId !== undefined)
        issues.push({ path: `${at}.id`, message: `the same token as tokens[${firstWithId}]; one token, one name` });
      else seenIds.set(token.id, index);
    }
    const own = lenientSettings(token);
    const unknown = new Set([...own.invalid, ...[...lenientDefaults.invalid].filter((key) => token[key] === undefined)]);
    issues.push(...checkSettings(mergeSettings(defaults, own.values), at, token, unknown));
  });
  const clashes = destinationClashes(sinksByToken.flat());
  issues.push(...clashes.filter((c) => c.verdict === 'same').map(clashIssue));
  if (!parsed.success || issues.length > 0) throw new ConfigError(issues);

  const parsedDefaults = mergeSettings(BUILT_IN_DEFAULTS, parsed.data.defaults ?? {});
  const defaultSchedule = mergeSchedule(DEFAULT_SCHEDULE, parsed.data.defaults ?? {});
  const tokens: TokenPolicy[] = parsed.data.tokens.map((token, index) => {
    const reload =
      token.reload !== undefined
        ? { list: reloadByToken[index] ?? [], at: `tokens[${index}].reload` }
        : { list: defaultReload, at: 'defaults.reload' };
    return {
      name: token.name,
      id: token.id,
      settings: mergeSettings(parsedDefaults, token),
      schedule: mergeSchedule(defaultSchedule, token),
      sinks: (sinksByToken[index] ?? []).map((s) => s.config),
      reload: reload.list,
      reloadAt: reload.at,
      ...verifyOf(token.verify, parsed.data.defaults?.verify),
    };
  });
  const unsure = clashes.filter((c) => c.verdict === 'unknown').map(clashIssue);
  return { file, tokens, notifications: parsed.data.notifications, warnings: [...policyWarnings(tokens), ...unsure] };
}

/**
 * Two sinks on one destination: two tokens would overwrite each other's secret on every run (each
 * regenerating for the other's "drift"), and two sinks of one token would share one journal mark.
 */
function clashIssue({ first, second, verdict, why }: DestinationClash): ConfigIssue {
  const how = why ? `: ${why}` : '';
  return verdict === 'same'
    ? { path: second.at, message: `writes to the same place as ${first.at}${how}` }
    : { path: second.at, message: `may write to the same place as ${first.at}${how}; validate --online asks the service` };
}

/** A token's own probe replaces the defaults'; `verify: null` on the token turns the defaults' off. */
function verifyOf(own: VerifyProbe | null | undefined, defaults: VerifyProbe | null | undefined): { verify?: VerifyProbe } {
  const probe = own === undefined ? defaults : own;
  return probe ? { verify: probe } : {};
}

/** What is valid but almost certainly not meant: said as a warning, never refused. */
function policyWarnings(tokens: readonly TokenPolicy[]): ConfigIssue[] {
  return tokens.length === 0 ? [{ path: 'tokens', message: 'the policy lists no tokens: nothing will be checked or rotated' }] : [];
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each setting parsed on its own: the valid ones, and the names of the invalid ones (all of them
 * when the whole is not a mapping), so that checks across settings skip what is already reported.
 */
function lenientSettings(raw: unknown): { values: RawSettings; invalid: Set<keyof RawSettings> } {
  const keys = Object.keys(settingsShape) as Array<keyof RawSettings>;
  if (!isMapping(raw)) return { values: {}, invalid: new Set(keys) };
  const values: Record<string, unknown> = {};
  const invalid = new Set<keyof RawSettings>();
  for (const key of keys) {
    if (raw[key] === undefined) continue;
    const result = settingsShape[key].safeParse(raw[key]);
    if (result.success) values[key] = result.data;
    else invalid.add(key);
  }
  return { values: values as RawSettings, invalid };
}

/** Each sink by its own type's parser; problems are added to `issues` with their full path. */
function parseSinks(rawSinks: unknown, at: string, sinkContext: SinkParseContext, issues: ConfigIssue[]): PlacedSink[] {
  if (!Array.isArray(rawSinks)) return [];
  const sinks: PlacedSink[] = [];
  rawSinks.forEach((rawSink, sinkIndex) => {
    const sinkAt = `${at}.sinks[${sinkIndex}]`;
    const type = (rawSink as { type?: unknown } | null)?.type;
    if (!isSinkType(type)) {
      const allowed = Object.keys(sinkTypes).join(', ');
      issues.push({
        path: `${sinkAt}.type`,
        message: type === undefined ? `required; one of: ${allowed}` : `unknown sink type ${JSON.stringify(type)}; one of: ${allowed}`,
      });
      return;
    }
    const result = sinkTypes[type].parse(rawSink, sinkContext);
    if (!result.ok) {
      issues.push(...result.issues.map((i) => ({ path: i.path === '(top level)' ? sinkAt : `${sinkAt}.${i.path}`, message: i.message })));
      return;
    }
    sinks.push({ config: result.config, at: sinkAt });
  });
  return sinks;
}

/** Each reload by its own type's parser; problems are added to `issues` with their full path. */
function parseReloads(rawReloads: unknown, at: string, context: ReloadParseContext, issues: ConfigIssue[]): ReloadConfig[] {
  if (!Array.isArray(rawReloads)) return [];
  return rawReloads.flatMap((rawReload, index) => {
    const reloadAt = `${at}[${index}]`;
    const type = (rawReload as { type?: unknown } | null)?.type;
    if (!isReloadType(type)) {
      const allowed = Object.keys(reloadTypes).join(', ');
      issues.push({
        path: `${reloadAt}.type`,
        message: type === undefined ? `required; one of: ${allowed}` : `unknown reload type ${JSON.stringify(type)}; one of: ${allowed}`,
      });
      return [];
    }
    const result = reloadTypes[type].parse(rawReload, context);
    if (!result.ok) {
      issues.push(
        ...result.issues.map((i) => ({ path: i.path === '(top level)' ? reloadAt : `${reloadAt}.${i.path}`, message: i.message })),
      );
      return [];
    }
    return [result.config];
  });
}

function mergeSchedule(base: CheckSchedule, raw: RawSettings): CheckSchedule {
  return { expression: raw.schedule ?? base.expression, timezone: raw.timezone ?? base.timezone, jitterMs: raw.jitter ?? base.jitterMs };
}

function mergeSettings(base: RotationSettings, raw: RawSettings): RotationSettings {
  return {
    renewBefore: raw.renewBefore ?? base.renewBefore,
    overlapMs: raw.overlap ?? base.overlapMs,
    lifetimeMs: raw.lifetime === undefined ? base.lifetimeMs : raw.lifetime === 'never' ? null : raw.lifetime,
    maxAgeMs: raw.maxAge === undefined ? base.maxAgeMs : raw.maxAge,
    onDrift: raw.onDrift ?? base.onDrift,
  };
}

/**
 * Combinations that are each valid alone but make a policy that cannot work: a token that is due
 * again the moment it is rotated would be regenerated on every run.
 */
function checkSettings(
  s: RotationSettings,
  at: string,
  raw: Record<string, unknown>,
  unknown: ReadonlySet<keyof RawSettings>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const where = (key: keyof RawSettings) => (raw[key] !== undefined ? `${at}.${key}` : `${at}.${key} (from defaults)`);
  const known = (...keys: Array<keyof RawSettings>) => keys.every((key) => !unknown.has(key));
  if (s.lifetimeMs !== null && known('lifetime')) {
    if (s.lifetimeMs <= 0) issues.push({ path: where('lifetime'), message: 'must be longer than 0s' });
    if (s.renewBefore.kind === 'duration' && s.renewBefore.ms >= s.lifetimeMs && known('renewBefore')) {
      issues.push({
        path: where('renewBefore'),
        message: `${formatDuration(s.renewBefore.ms)} is not shorter than lifetime ${formatDuration(s.lifetimeMs)}: every new token would be due at once`,
      });
    }
  } else if (s.lifetimeMs === null && s.renewBefore.kind === 'share' && known('lifetime', 'renewBefore')) {
    issues.push({ path: where('renewBefore'), message: 'a share of the lifetime needs a lifetime; lifetime is "never"' });
  }
  if (typeof s.maxAgeMs === 'number' && s.maxAgeMs <= 0 && known('maxAge'))
    issues.push({ path: where('maxAge'), message: 'must be longer than 0s' });
  return issues;
}
