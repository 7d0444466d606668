import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { isSinkType, sinkFactories, type SinkConfig } from '../sinks/registry.js';
import { formatDuration } from './duration.js';
import { fromZodIssues } from './issues.js';
import { policySchema, type RawSettings } from './policy-schema.js';
import type { Policy, RotationSettings, TokenPolicy } from './types.js';

export const BUILT_IN_DEFAULTS: RotationSettings = {
  renewBefore: { kind: 'duration', ms: 7 * 24 * 3600_000 },
  overlapMs: 3600_000,
  lifetimeMs: 30 * 24 * 3600_000,
  maxAgeMs: null,
};

/** Reads and checks a policy file; every problem is collected and thrown together as a ConfigError. */
export async function loadPolicy(path: string): Promise<Policy> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
    throw new ConfigError([{ path: path, message: `cannot read policy file: ${why}` }]);
  }
  return parsePolicy(text, file);
}

export function parsePolicy(text: string, file: string): Policy {
  // YAML 1.2 is a superset of JSON, so one parser serves both, with line numbers for both.
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      document.errors.map((e) => ({
        path: `${file}:${e.linePos?.[0]?.line ?? '?'}:${e.linePos?.[0]?.col ?? '?'}`,
        message: e.message.split('\n')[0] ?? e.message,
      })),
    );
  }
  const parsed = policySchema.safeParse(document.toJS(), { reportInput: true });
  if (!parsed.success) throw new ConfigError(fromZodIssues(parsed.error.issues));

  const issues: ConfigIssue[] = [];
  const policyDir = dirname(file);
  const defaults = mergeSettings(BUILT_IN_DEFAULTS, parsed.data.defaults ?? {});
  const seenNames = new Map<string, number>();
  const seenIds = new Map<string, number>();
  const seenTargets = new Map<string, string>();

  const tokens: TokenPolicy[] = parsed.data.tokens.map((raw, index) => {
    const at = `tokens[${index}]`;
    const firstWithName = seenNames.get(raw.name);
    if (firstWithName !== undefined) issues.push({ path: `${at}.name`, message: `'${raw.name}' is already used by tokens[${firstWithName}]; names must be unique` });
    else seenNames.set(raw.name, index);
    const firstWithId = seenIds.get(raw.id);
    if (firstWithId !== undefined) issues.push({ path: `${at}.id`, message: `the same token as tokens[${firstWithId}]; one token, one name` });
    else seenIds.set(raw.id, index);

    const settings = mergeSettings(defaults, raw);
    issues.push(...checkSettings(settings, at, raw));

    const sinks: SinkConfig[] = [];
    raw.sinks.forEach((rawSink, sinkIndex) => {
      const sinkAt = `${at}.sinks[${sinkIndex}]`;
      const type = (rawSink as { type?: unknown } | null)?.type;
      if (!isSinkType(type)) {
        const allowed = Object.keys(sinkFactories).join(', ');
        issues.push({
          path: `${sinkAt}.type`,
          message: type === undefined ? `required; one of: ${allowed}` : `unknown sink type ${JSON.stringify(type)}; one of: ${allowed}`,
        });
        return;
      }
      const result = sinkFactories[type].parse(rawSink, { policyDir });
      if (!result.ok) {
        issues.push(...result.issues.map((i) => ({ path: `${sinkAt}.${i.path}`.replace('.(top level)', ''), message: i.message })));
        return;
      }
      const target = sinkFactories[type].target(result.config);
      const firstAt = seenTargets.get(target);
      if (firstAt) issues.push({ path: sinkAt, message: `writes to the same place as ${firstAt}` });
      else seenTargets.set(target, sinkAt);
      sinks.push(result.config);
    });
    return { name: raw.name, id: raw.id, settings, sinks };
  });

  if (issues.length > 0) throw new ConfigError(issues);
  return { file, tokens };
}

function mergeSettings(base: RotationSettings, raw: RawSettings): RotationSettings {
  return {
    renewBefore: raw.renewBefore ?? base.renewBefore,
    overlapMs: raw.overlap ?? base.overlapMs,
    lifetimeMs: raw.lifetime === undefined ? base.lifetimeMs : raw.lifetime === 'never' ? null : raw.lifetime,
    maxAgeMs: raw.maxAge === undefined ? base.maxAgeMs : raw.maxAge,
  };
}

/**
 * Combinations that are each valid alone but make a policy that cannot work: a token that is due
 * again the moment it is rotated would be regenerated on every run.
 */
function checkSettings(s: RotationSettings, at: string, raw: RawSettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const where = (key: keyof RawSettings) => (raw[key] !== undefined ? `${at}.${key}` : `${at}.${key} (from defaults)`);
  if (s.lifetimeMs !== null) {
    if (s.lifetimeMs <= 0) issues.push({ path: where('lifetime'), message: 'must be longer than 0s' });
    if (s.renewBefore.kind === 'duration' && s.renewBefore.ms >= s.lifetimeMs) {
      issues.push({
        path: where('renewBefore'),
        message: `${formatDuration(s.renewBefore.ms)} is not shorter than lifetime ${formatDuration(s.lifetimeMs)}: every new token would be due at once`,
      });
    }
  } else if (s.renewBefore.kind === 'share') {
    issues.push({ path: where('renewBefore'), message: 'a share of the lifetime needs a lifetime; lifetime is "never"' });
  }
  if (s.maxAgeMs !== null && s.maxAgeMs <= 0) issues.push({ path: where('maxAge'), message: 'must be longer than 0s' });
  return issues;
}
