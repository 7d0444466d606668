import * as z from 'zod';

import { fromZodIssues } from '../../common/config-issues.js';
import { strictObject } from '../../common/strict-object.js';
import { namespaceOrDefault } from '../../kubernetes/default-namespace.js';
import { LABEL_KEY, LABEL_VALUE, NAMESPACE_NAME, OBJECT_NAME } from '../../kubernetes/names.js';
import type { ReloadParseContext, ReloadParseResult } from '../reload.js';

export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export interface RolloutReloadConfig {
  type: 'rollout';
  kind: WorkloadKind;
  namespace: string;
  /** One workload by name, or every workload of the kind whose labels match. */
  workload: { name: string } | { selector: Record<string, string> };
}

const schema = strictObject({
  type: z.literal('rollout'),
  kind: z.enum(WORKLOAD_KINDS).default('Deployment'),
  name: z
    .string()
    .max(253, 'at most 253 characters')
    .regex(OBJECT_NAME, 'must be a Kubernetes object name: lowercase letters, digits, "-" and "."')
    .optional(),
  selector: z
    .record(
      z.string().regex(LABEL_KEY, 'must be a label key'),
      z.string().regex(LABEL_VALUE, 'must be a label value (at most 63 characters)'),
    )
    .optional(),
  namespace: z
    .string()
    .max(63, 'at most 63 characters')
    .regex(NAMESPACE_NAME, 'must be a namespace name: lowercase letters, digits and "-"')
    .optional(),
});

export function parseRolloutConfig(raw: unknown, context: ReloadParseContext): ReloadParseResult<RolloutReloadConfig> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  const issues = parsed.success ? [] : fromZodIssues(parsed.error.issues);
  // Said even when other fields are wrong, so that one run names every problem.
  const namespace = namespaceOrDefault(raw, context.env, issues);
  if (!parsed.success) return { ok: false, issues };
  const { kind, name, selector } = parsed.data;
  if ((name === undefined) === (selector === undefined)) {
    issues.push({ path: name === undefined ? 'name' : 'selector', message: 'give either name or selector (labels to match), not both' });
  } else if (selector !== undefined && Object.keys(selector).length === 0) {
    issues.push({ path: 'selector', message: 'an empty selector would restart every workload in the namespace; name at least one label' });
  }
  if (issues.length > 0 || !namespace) return { ok: false, issues };
  return { ok: true, config: { type: 'rollout', kind, namespace, workload: name !== undefined ? { name } : { selector: selector! } } };
}

/** `app=ingest,tier=api`: a label selector as the API takes it. */
export const selectorText = (selector: Record<string, string>) =>
  Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

export function describeRollout(config: RolloutReloadConfig): string {
  return 'name' in config.workload
    ? `${config.kind} ${config.namespace}/${config.workload.name}`
    : `${config.kind}s in ${config.namespace} matching ${selectorText(config.workload.selector)}`;
}

/** `Deployment apps/ingest-api`: how a restarted workload is named in outcomes, tables and logs. */
export const rolloutTarget = (kind: WorkloadKind, namespace: string, name: string) => `${kind} ${namespace}/${name}`;

/** The workload a rollout outcome names (see rolloutTarget); undefined for any other target. */
export function parseRolloutTarget(target: string): { kind: WorkloadKind; namespace: string; name: string } | undefined {
  const match = /^(\w+) ([^/\s]+)\/(\S+)$/.exec(target);
  const kind = WORKLOAD_KINDS.find((k) => k === match?.[1]);
  return match && kind ? { kind, namespace: match[2]!, name: match[3]! } : undefined;
}
