import { plural } from './expiry.js';
import type { ItemAction } from './run-items.js';

/**
 * What `plan`, `once` and `rotate` count, in the words of their items: each `action` done (plan:
 * that would be done) by a line whose result is ok, then the lines that `failed` or were
 * `interrupted`. These add up to `total`. `needsAttention`: the lines a person must see, as in every
 * kind's summary, so that one CI gate (`jq -e '.summary.needsAttention == 0'`) serves every command.
 */
export interface ActionSummary {
  total: number;
  rotate: number;
  redeliver: number;
  skip: number;
  failed: number;
  interrupted: number;
  needsAttention: number;
}

interface CountedItem {
  action: ItemAction;
  result: 'ok' | 'failed' | 'interrupted';
  needsAttention: boolean;
}

export function actionSummary(items: CountedItem[]): ActionSummary {
  const done = (action: ItemAction) => items.filter((i) => i.result === 'ok' && i.action === action).length;
  return {
    total: items.length,
    rotate: done('rotate'),
    redeliver: done('redeliver'),
    skip: done('skip'),
    failed: items.filter((i) => i.result === 'failed').length,
    interrupted: items.filter((i) => i.result === 'interrupted').length,
    needsAttention: items.filter((i) => i.needsAttention).length,
  };
}

/** A line's word in the ACTION column: its action when it went well, else its result; the JSON's words. */
export function actionWord(item: Pick<CountedItem, 'action' | 'result'>): string {
  return item.result === 'ok' ? item.action : item.result;
}

/**
 * The line under a table: `3 tokens: rotate 1, skip 2`, each count named by its key in the JSON's
 * summary (zeros left out), then how many need attention when any do.
 */
export function countsLine(total: number, counts: Array<[word: string, count: number]>, needsAttention: number): string {
  const shown = counts.filter(([, n]) => n > 0).map(([word, n]) => `${word} ${n}`);
  const attention = needsAttention > 0 ? `; ${needsAttention} need${needsAttention === 1 ? 's' : ''} attention` : '';
  return `${plural(total, 'token')}: ${shown.join(', ') || 'none'}${attention}\n`;
}

export function actionCountsLine(summary: ActionSummary): string {
  const { total, needsAttention, ...counts } = summary;
  return countsLine(total, Object.entries(counts), needsAttention);
}
