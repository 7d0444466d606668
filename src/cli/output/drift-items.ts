import type { DriftFinding } from '../../policy/sink-drift.js';
import type { SinkLookup, SinkRef } from './sink-ref.js';

/** A sink found not to hold the current secret. */
export interface DriftItem extends SinkRef {
  kind: DriftFinding['kind'];
  detail?: string;
  /** Found before anything was delivered to the name: its first delivery, not news. */
  initial?: true;
}

export function driftItems(name: string, drift: DriftFinding[] | undefined, lookup: SinkLookup): DriftItem[] {
  return (drift ?? []).map((d) => {
    const ref = lookup(name, d.target);
    return {
      ...ref,
      description: d.sink,
      kind: d.kind,
      ...(d.detail !== undefined ? { detail: d.detail } : {}),
      ...(d.initial ? { initial: true as const } : {}),
    };
  });
}

/**
 * One drift finding in a table cell. A sink's own error already names the sink (it is logged on its
 * own), so it is not named again before it.
 */
export function describeDriftItem(d: DriftItem): string {
  const detail = d.detail ?? '';
  const named = detail.includes(d.description);
  switch (d.kind) {
    case 'missing':
      return `${d.description} is missing${detail ? ` (${detail})` : ''}`;
    case 'foreign':
      return `${d.description} holds another secret${detail ? ` (${detail})` : ''}`;
    case 'new':
      return `${d.description} is new in the policy`;
    case 'unreadable':
      return named ? detail : `${d.description} cannot be read${detail ? `: ${detail}` : ''}`;
    case 'unowned':
      return `${d.description} ${detail || 'is not managed by token-rotator'}`;
    case 'unmarked':
      return `${d.description} has lost its token-rotator marker${detail ? ` (${detail})` : ''}: edited outside token-rotator?`;
  }
}
