/** A token the service created whose secret never reached us: it exists and nobody can use it. */
export interface OrphanReport {
  name: string;
  /** The id the lost regenerate was sent for. */
  oldId: string;
  /** The orphan's own id, when the answer arrived and was lost afterwards. */
  newId?: string;
  /** When the lost regenerate was sent: the orphan was created about then. */
  regeneratedAt: string;
  detectedAt: string;
  /** Until when the old token still works (null: it never expires; undefined: it is gone). */
  oldTokenWorksUntil: string | null | undefined;
}
