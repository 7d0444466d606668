/** metav1.MicroTime: RFC 3339 with six fractional digits, as the API server writes it (Leases, Events). */
export function microTime(at: Date): string {
  // Stryker disable next-line Regex: toISOString() has one Z, at its end: the anchor cannot change a match.
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
