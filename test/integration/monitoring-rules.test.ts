import { execFile } from 'node:child_process';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The shipped alert rules run by Prometheus's own rule engine: `promtool check rules` on the rules
 * file, and `promtool test rules` on scenarios (test/fixtures/monitoring/alert-scenarios.yaml): two
 * replicas reporting the same token page once, a failed CronJob run pages until a later run succeeds.
 *
 * promtool comes from Debian's prometheus package (.ci/run takes the binary out of it); set
 * PROMTOOL to use another. Without it these tests are skipped, except where `.ci/run` installed it
 * (REQUIRE_PROMTOOL=1, as root), where they fail.
 */

const root = resolve(import.meta.dirname, '../..');
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const SCENARIOS = join(root, 'test/fixtures/monitoring/alert-scenarios.yaml');
/** Per process, not per token or CronJob: a pod down, a metric absent, a machine's clock. */
const WITHOUT_SCENARIO = new Set(['TokenRotatorDown', 'TokenRotatorAbsent', 'TokenRotatorClockSkew']);

const execFileAsync = promisify(execFile);

async function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(PROMTOOL, args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT')
      throw new Error(`${PROMTOOL} not found: install Debian's prometheus package, or set PROMTOOL`, { cause: error });
    return { code: Number(failed.code), output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const found = await execFileAsync(PROMTOOL, ['--version']).then(
  () => true,
  () => false,
);

interface RulesFile {
  groups: Array<{ name: string; rules: Array<{ alert: string; annotations?: Record<string, string> }> }>;
}
interface Scenarios {
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

describe.skipIf(!found && !process.env.REQUIRE_PROMTOOL)(`config/monitoring/prometheus-rule.yaml under promtool (${PROMTOOL})`, () => {
  let dir: string;
  let rules: RulesFile;
  beforeAll(async () => {
    dir = await makeTempDir();
    rules = (parse(await readFile(join(root, 'config/monitoring/prometheus-rule.yaml'), 'utf8')) as { spec: RulesFile }).spec;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is a valid rules file: every expression and annotation template', async () => {
    await writeFile(join(dir, 'prometheus-rules.yaml'), stringify(rules));
    const { code, output } = await promtool(['check', 'rules', 'prometheus-rules.yaml'], dir);
    expect(output, output).toContain(`SUCCESS: ${rules.groups.flatMap((g) => g.rules).length} rules found`);
    expect(code, output).toBe(0);
  });

  it('pages once per token with two replicas, and once per failed CronJob run until a run succeeds (the scenarios)', async () => {
    // The scenarios state the labels each alert pages with; promtool would also compare the
    // annotations, which are the rules file's text, checked above.
    const withoutAnnotations = structuredClone(rules);
    for (const group of withoutAnnotations.groups) for (const rule of group.rules) delete rule.annotations;
    await writeFile(join(dir, 'rules.yaml'), stringify(withoutAnnotations));
    await copyFile(SCENARIOS, join(dir, 'alert-scenarios.yaml'));
    const { code, output } = await promtool(['test', 'rules', 'alert-scenarios.yaml'], dir);
    expect(code, output).toBe(0);
  });

  it('has a scenario in which each alert on tokens and on the CronJob fires', async () => {
    const scenarios = parse(await readFile(SCENARIOS, 'utf8')) as Scenarios;
    const fired = new Set(
      scenarios.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert)).filter((a) => !WITHOUT_SCENARIO.has(a));
    expect(alerts.length).toBeGreaterThan(10);
    for (const alert of alerts) expect(fired, alert).toContain(alert);
  });
});
