/** One thing wrong with how the emulator was started: the option or seed path, and what is wrong. */
export interface UsageIssue {
  path: string;
  message: string;
}

/**
 * A bad option or seed file: exit 2, every problem named with its path, in the product's format
 * (`N configuration problem(s):` then `  path: message`), so that a user reads both alike.
 */
export class EmulatorUsageError extends Error {
  override readonly name = 'EmulatorUsageError';
  readonly issues: readonly UsageIssue[];

  constructor(issues: readonly UsageIssue[]) {
    const sorted = [...issues].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    const noun = sorted.length === 1 ? 'problem' : 'problems';
    super(`${sorted.length} configuration ${noun}:\n${sorted.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
    this.issues = sorted;
  }
}
