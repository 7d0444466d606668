import { randomUUID } from 'node:crypto';

import { microTime } from '../micro-time.js';
import { OBJECT_NAME } from '../names.js';
import { type EventIntent, type EventObject, REPORTING_CONTROLLER } from './event-types.js';

/** client-go tools/events: a series not observed for this long is finished; its next occurrence is a new Event. */
export const SERIES_FINISH_MS = 6 * 60_000;
/** NoteLengthLimit of the API's validation: a longer note is refused, so it is cut as client-go cuts it. */
export const NOTE_LENGTH_LIMIT = 1024;
/** ReportingInstanceLengthLimit. */
export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
/** Entries kept at most: a bound for a daemon that runs for months over many names. */
const MAX_ENTRIES = 4096;

/** What to send for an occurrence: a new Event, or a patch of an existing one's series. */
export type SeriesStep =
  { kind: 'create'; event: EventObject } | { kind: 'patch'; event: EventObject; patch: { series: NonNullable<EventObject['series']> } };

/**
 * client-go's event cache (tools/events/event_broadcaster.go, recordToSink): an occurrence
 * isomorphic to one already recorded (same type, action, reason, reporting controller and
 * instance, regarding and related objects) turns the recorded Event into a series (count 2, then
 * each time one more, and the time last observed), sent as a patch of that Event rather than as a
 * new one. Unlike client-go, the note is part of what makes two occurrences the same: a note here
 * names a token id or a rotation, and a series must not hide a new one under an old note.
 */
export class EventSeriesCache {
  private readonly entries = new Map<string, { event: EventObject; lastObservedMs: number }>();
  private lastNano = 0n;

  constructor(private readonly reportingInstance: string) {}

  next(intent: EventIntent, now: Date): SeriesStep {
    this.finishSeries(now.getTime());
    const key = isomorphicKey(intent);
    const known = this.entries.get(key);
    if (known) {
      known.lastObservedMs = now.getTime();
      const count = (known.event.series?.count ?? 1) + 1;
      known.event = { ...known.event, series: { count, lastObservedTime: microTime(now) } };
      return { kind: 'patch', event: known.event, patch: { series: known.event.series! } };
    }
    const event = this.makeEvent(intent, now);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { event, lastObservedMs: now.getTime() });
    return { kind: 'create', event };
  }

  /** After the API lost the Event a series patches (404): the next occurrence creates it anew. */
  forget(intent: EventIntent): void {
    this.entries.delete(isomorphicKey(intent));
  }

  /** finishSeries: entries not observed within SERIES_FINISH_MS are dropped. */
  private finishSeries(nowMs: number): void {
    for (const [key, entry] of this.entries) if (nowMs - entry.lastObservedMs > SERIES_FINISH_MS) this.entries.delete(key);
  }

  /** makeEvent: named `<regarding>.<unix nanoseconds in hex>` as client-go names it. */
  private makeEvent(intent: EventIntent, now: Date): EventObject {
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: this.eventName(intent.regarding.name, now), namespace: intent.regarding.namespace || 'default' },
      eventTime: microTime(now),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.reportingInstance,
      action: intent.action,
      reason: intent.reason,
      regarding: intent.regarding,
      ...(intent.related ? { related: intent.related } : {}),
      note: truncateNote(intent.note),
      type: intent.type,
    };
  }

  /** util.GenerateEventName; nanoseconds kept increasing, since the clock here counts milliseconds. */
  private eventName(regarding: string, now: Date): string {
    let nano = BigInt(now.getTime()) * 1_000_000n;
    if (nano <= this.lastNano) nano = this.lastNano + 1n;
    this.lastNano = nano;
    const name = `${regarding}.${nano.toString(16)}`;
    return name.length <= 253 && OBJECT_NAME.test(name) ? name : randomUUID();
  }
}

function isomorphicKey(intent: EventIntent): string {
  const ref = (r: EventIntent['regarding'] | undefined) => (r ? [r.apiVersion, r.kind, r.namespace, r.name, r.uid ?? ''] : []);
  return JSON.stringify([intent.type, intent.action, intent.reason, ref(intent.regarding), ref(intent.related), intent.note]);
}

function truncateNote(note: string): string {
  return note.length > NOTE_LENGTH_LIMIT ? `${note.slice(0, NOTE_LENGTH_LIMIT - 3)}...` : note;
}
