import { findResourceType } from '../resource-types.js';
import { CORE_EVENT_SCHEMA } from '../schema.js';
import { coreEventFields, coreEventOf } from './core-event-form.js';
import { EVENT_COLUMNS, eventCells } from './event-printer.js';
import { eventStrategy } from './event-strategy.js';
import type { KindStrategy } from './kind-strategy.js';

/**
 * The core v1 Event: what `kubectl get events`, `kubectl events` and the describers read, a view
 * of the events.k8s.io/v1 Events the double stores (see core-event-form.ts). Read-only here (get,
 * list): writes go through events.k8s.io, as token-rotator's recorder makes them.
 */
export const coreEventView: KindStrategy = {
  ...eventStrategy,
  type: findResourceType('', 'v1', 'events')!,
  schema: CORE_EVENT_SCHEMA,
  fromStorage: coreEventOf,
  selectableFields: coreEventFields,
  columns: EVENT_COLUMNS,
  cells: (event, _age, now) => eventCells(event, now),
};
