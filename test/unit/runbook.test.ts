import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * Every shipped alert leads somewhere: docs/operations/runbook.md has a `### <AlertName>` section
 * for it under "## Alerts", and the rule's `runbook_url` annotation links to that section on the
 * repository's main branch. The reverse too: a section under "## Alerts" names a shipped alert, so
 * a renamed or removed alert cannot leave its runbook behind.
 */

const root = resolve(import.meta.dirname, '../..');
const RUNBOOK = 'docs/operations/runbook.md';

interface Rules {
  spec: { groups: Array<{ rules: Array<{ alert: string; annotations?: Record<string, string> }> }> };
}

async function shippedAlerts(): Promise<Map<string, Record<string, string>>> {
  const rules = parse(await readFile(join(root, 'config/monitoring/prometheus-rule.yaml'), 'utf8')) as Rules;
  return new Map(rules.spec.groups.flatMap((g) => g.rules.map((r) => [r.alert, r.annotations ?? {}] as const)));
}

/** The `###` headings of the runbook's "## Alerts" section, outside code fences. */
async function runbookAlertSections(): Promise<string[]> {
  const headings: string[] = [];
  let inAlerts = false;
  let inFence = false;
  for (const line of (await readFile(join(root, RUNBOOK), 'utf8')).split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence) continue;
    if (line.startsWith('## ')) inAlerts = line === '## Alerts';
    else if (inAlerts && line.startsWith('### ')) headings.push(line.slice(4).trim());
  }
  return headings;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

async function runbookBase(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { repository: { url: string } };
  const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  return `${repository}/blob/main/${RUNBOOK}`;
}

describe('the runbook and the shipped alerts', () => {
  it('has a section for every shipped alert', async () => {
    const sections = new Set(await runbookAlertSections());
    const alerts = [...(await shippedAlerts()).keys()];
    expect(alerts.length).toBeGreaterThan(10);
    for (const alert of alerts) expect(sections, `${RUNBOOK} has no "### ${alert}" under "## Alerts"`).toContain(alert);
  });

  it('names only shipped alerts in its alert sections, each once', async () => {
    const alerts = await shippedAlerts();
    const sections = await runbookAlertSections();
    for (const section of sections) expect(alerts.has(section), `"### ${section}" is not an alert of prometheus-rule.yaml`).toBe(true);
    expect(new Set(sections).size, 'an alert section appears twice').toBe(sections.length);
  });

  it("links every alert to its own section with a runbook_url on the repository's main branch", async () => {
    const base = await runbookBase();
    for (const [alert, annotations] of await shippedAlerts()) {
      expect(annotations.runbook_url, `${alert}: runbook_url`).toBe(`${base}#${headingAnchor(alert)}`);
    }
  });

  it('computes anchors as GitHub does', () => {
    expect(headingAnchor('TokenRotatorDown')).toBe('tokenrotatordown');
    expect(headingAnchor('A held secret (`--held-id`)')).toBe('a-held-secret---held-id');
  });
});
