/** One thing `validate --online` looked at, and what it found. */
export interface OnlineCheck {
  check: 'state' | 'service' | 'sink' | 'reload';
  target: string;
  result: 'ok' | 'failed' | 'not checked';
  note?: string;
}
