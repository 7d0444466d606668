/** An object an Event is about (core v1 ObjectReference, as `regarding` and `related` carry it). */
export interface ObjectReference {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Filled in by the recorder when it can read the object: `kubectl describe` finds Events by it. */
  uid?: string;
}

/**
 * One thing to record, as client-go's `Eventf(regarding, related, type, reason, action, note)`
 * takes it. `reason` is CamelCase (what `kubectl get events` shows), `action` what was done.
 * `note` is for people and never holds a secret.
 */
export interface EventIntent {
  regarding: ObjectReference;
  related?: ObjectReference;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

/** The events.k8s.io/v1 Event as it is sent. */
export interface EventObject {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note: string;
  type: 'Normal' | 'Warning';
}

/** What token-rotator's Events name as their reporting controller. */
export const REPORTING_CONTROLLER = 'token-rotator';
