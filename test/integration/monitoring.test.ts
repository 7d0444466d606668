import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { parser } from '@prometheus-io/lezer-promql';
import { type Emulator, startEmulator } from 'token-rotator-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

import { systemClock } from '../../src/clock.js';
import { readEnvironment, readSettings } from '../../src/config/env.js';
import { parsePolicy } from '../../src/config/load-policy.js';
import { type Daemon, startDaemon } from '../../src/daemon/start-daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { seedSink, writeEmulatorEnv } from '../helpers/cli.js';
import { renderKustomization } from '../helpers/kustomize.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = resolve(import.meta.dirname, '../..');
const monitoring = join(root, 'config/monitoring');
/** Made by Prometheus itself for every target, not by an exporter. */
const PROMETHEUS_OWN = new Set(['up']);
/**
 * The kube-state-metrics series the CronJob shape's alerts read (it has no /metrics of its own),
 * as kube-state-metrics v2 documents them (docs/metrics/workload/job-metrics.md, cronjob-metrics.md).
 */
const KUBE_STATE_METRICS = new Set([
  'kube_job_status_start_time',
  'kube_job_failed',
  'kube_cronjob_status_last_successful_time',
  'kube_cronjob_created',
]);
/** The alert group that reads kube-state-metrics instead of the daemon. */
const CRONJOB_GROUP = 'token-rotator.cronjob';
/** Labels that tell one scraped pod from another: an alert that keeps them pages once per replica. */
const PER_TARGET = new Set(['instance', 'pod']);

interface Scrape {
  /** Every metric name the daemon exposes (`# TYPE` lines), with the suffixes its type adds. */
  names: Set<string>;
  /** Every series line: `name{labels} value`. */
  series: string[];
}

function readScrape(text: string): Scrape {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return { names, series: text.split('\n').filter((l) => l && !l.startsWith('#')) };
}

/** A series value of the scrape, or undefined when the series is not there. */
function value(scrape: Scrape, name: string, labels: string): number | undefined {
  const line = scrape.series.find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** Grafana's variables, as Grafana would substitute them before sending the query. */
const substituteGrafana = (expr: string) =>
  expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replaceAll(/\$\{?\w+\}?/g, '.*');

interface Selector {
  metric: string;
  /** `label="value"` matchers (exact ones), to check the value exists. */
  exact: Array<{ label: string; value: string }>;
  /** The `by` labels of the nearest aggregation around the selector; absent when none is, or it is `without`. */
  by?: string[];
  /** `label=~"regex"` matchers, when there are any. */
  regex?: Array<{ label: string; value: string }>;
}

/** Parses with Prometheus's own PromQL grammar: syntax errors, and every metric selected. */
function parsePromql(expr: string): { errors: string[]; selectors: Selector[] } {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const selectors: Selector[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 10), node.to + 10))}`);
      if (node.name !== 'VectorSelector') return;
      const identifier = node.node.getChild('Identifier');
      if (!identifier) return;
      const exact: Selector['exact'] = [];
      const regex: Selector['exact'] = [];
      for (const matcher of node.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
        const label = matcher.getChild('LabelName');
        const op = matcher.getChild('MatchOp');
        const literal = matcher.getChild('StringLiteral');
        if (!label || !literal) continue;
        const found = { label: expr.slice(label.from, label.to), value: JSON.parse(expr.slice(literal.from, literal.to)) as string };
        if (op?.getChild('EqlSingle')) exact.push(found);
        if (op?.getChild('EqlRegex')) regex.push(found);
      }
      let by: string[] | undefined;
      for (let parent = node.node.parent; parent; parent = parent.parent) {
        if (parent.name !== 'AggregateExpr') continue;
        const modifier = parent.getChild('AggregateModifier');
        if (modifier?.getChild('By'))
          by = (modifier.getChild('GroupingLabels')?.getChildren('LabelName') ?? []).map((l) => expr.slice(l.from, l.to));
        break;
      }
      selectors.push({
        metric: expr.slice(identifier.from, identifier.to),
        exact,
        ...(by ? { by } : {}),
        ...(regex.length ? { regex } : {}),
      });
    },
  });
  return { errors, selectors };
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

async function ruleExpressions(): Promise<Array<{ where: string; expr: string; group?: string }>> {
  const rule = parseYaml(await readFile(join(monitoring, 'prometheus-rule.yaml'), 'utf8')) as {
    apiVersion: string;
    kind: string;
    spec: { groups: Array<{ name: string; rules: Rule[] }> };
  };
  expect(rule).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
  return rule.spec.groups.flatMap((group) =>
    group.rules.map((r) => {
      expect(r.alert, `${group.name}: a rule without an alert name`).toMatch(/^TokenRotator[A-Za-z]+$/);
      expect(r.labels?.severity, `${r.alert}: severity`).toMatch(/^(critical|warning)$/);
      expect(r.annotations?.summary, `${r.alert}: summary`).toBeTruthy();
      if (r.for !== undefined) expect(r.for, `${r.alert}: for`).toMatch(/^\d+[smh]$/);
      return { where: `prometheus-rule.yaml ${r.alert}`, expr: r.expr, group: group.name };
    }),
  );
}

async function dashboardExpressions(): Promise<Array<{ where: string; expr: string }>> {
  const dashboard = JSON.parse(await readFile(join(monitoring, 'grafana-dashboard.json'), 'utf8')) as {
    uid: string;
    panels: Array<{ id: number; title: string; targets?: Array<{ expr: string; refId: string }> }>;
    templating: { list: Array<{ name: string; query: unknown; definition?: string }> };
  };
  expect(dashboard.uid).toBe('token-rotator');
  expect(new Set(dashboard.panels.map((p) => p.id)).size, 'panel ids are unique').toBe(dashboard.panels.length);
  const found = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((t) => ({ where: `grafana-dashboard.json "${panel.title}" ${t.refId}`, expr: substituteGrafana(t.expr) })),
  );
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'object' ? (variable.query as { query?: string }).query : variable.query;
    // Grafana's label_values(metric, label): the metric inside is what must exist.
    const inner = typeof query === 'string' ? /^label_values\((.+),\s*\w+\)$/.exec(query)?.[1] : undefined;
    if (inner) found.push({ where: `grafana-dashboard.json variable ${variable.name}`, expr: inner });
  }
  return found;
}

describe('config/monitoring: the dashboard and the alerts use what the daemon really exports', () => {
  let emulator: Emulator;
  let dir: string;
  let daemon: Daemon;
  let scrape: Scrape;
  let known: { id: string };

  beforeAll(async () => {
    emulator = await startEmulator();
    dir = await makeTempDir();
    known = emulator.store.add({ name: 'known', expiresAt: new Date(Date.now() + 60 * 86400_000) });
    await seedSink(dir, 'known.token', emulator.store.get(known.id)!.secret);
    const envFile = await writeEmulatorEnv(emulator, dir, { RELOAD_URL: 'http://127.0.0.1:9/reload' });
    const env = readEnvironment({}, { envFile, cwd: dir });
    const settings = readSettings(env, dir);
    const policy = parsePolicy(
      [
        'version: 1',
        'tokens:',
        `  - { name: known, id: "${known.id}", sinks: [{ type: file, path: known.token }], reload: [{ type: webhook, urlFrom: RELOAD_URL }] }`,
        // an id the service does not know: deleted in its console, say
        '  - { name: gone, id: "0a0a0a0a0a0a", sinks: [{ type: file, path: gone.token }] }',
      ].join('\n'),
      join(dir, 'rotation.yaml'),
    );
    daemon = await startDaemon({
      settings,
      policy,
      notify: async () => undefined,
      reloadPolicy: () => Promise.reject(new Error('not in this test')),
      listen: { host: '127.0.0.1', port: 0 },
      logger: createLogger({ level: 'silent' }),
      clock: systemClock,
      env,
    });
    // both first checks done: each name has a successful check or a 404 counted
    for (let waited = 0; ; waited += 50) {
      scrape = readScrape(await (await fetch(`${daemon.url}/metrics`)).text());
      const checked = (token: string) =>
        ['success', 'token_not_found', 'failure'].some(
          (result) => (value(scrape, 'token_rotator_checks_total', `token="${token}",result="${result}"`) ?? 0) > 0,
        );
      if (checked('known') && checked('gone')) break;
      if (waited > 25_000) throw new Error('the first checks did not reach the metrics');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    await daemon?.stop(1000);
    await emulator?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('exports build info, and a 404 on retrieve is counted as token_not_found, not as a failed rotation', () => {
    expect(scrape.series.find((l) => l.startsWith('token_rotator_build_info{'))).toMatch(
      /^token_rotator_build_info\{version="\d+\.\d+\.\d+[^"]*",node="v\d+\.\d+\.\d+"\} 1$/,
    );
    expect(value(scrape, 'token_rotator_checks_total', 'token="gone",result="token_not_found"')).toBe(1);
    expect(value(scrape, 'token_rotator_checks_total', 'token="gone",result="failure"')).toBe(0);
    expect(value(scrape, 'token_rotator_rotations_total', 'token="gone",result="failure"')).toBe(0);
    expect(value(scrape, 'token_rotator_consecutive_failures', 'token="gone"')).toBe(1);
    expect(value(scrape, 'token_rotator_checks_total', 'token="known",result="success"')).toBe(1);
    expect(value(scrape, 'token_rotator_last_successful_check_timestamp_seconds', 'token="known"')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(value(scrape, 'token_rotator_last_successful_check_timestamp_seconds', 'token="gone"')).toBeUndefined();
    expect(scrape.names.has('token_rotator_last_success_timestamp_seconds')).toBe(false);
  });

  it('every per-token counter is there from the start at 0, for every sink and reload target of the policy', () => {
    for (const result of ['success', 'failure', 'interrupted']) {
      expect(value(scrape, 'token_rotator_rotations_total', `token="known",result="${result}"`), result).toBe(0);
    }
    expect(value(scrape, 'token_rotator_orphaned_tokens_total', 'token="gone"')).toBe(0);
    expect(value(scrape, 'token_rotator_sink_writes_total', 'token="known",sink="file known.token",result="failed"')).toBe(0);
    expect(value(scrape, 'token_rotator_sink_drift_detected_total', 'token="gone",sink="file gone.token",kind="foreign"')).toBe(0);
    expect(value(scrape, 'token_rotator_reloads_total', 'token="known",target="webhook RELOAD_URL",result="failed"')).toBe(0);
    expect(value(scrape, 'token_rotator_checks_total', 'token="known",result="interrupted"')).toBe(0);
  });

  it('every alert and every dashboard query parses as PromQL and selects only metrics (and label values) the daemon exports', async () => {
    const expressions: Array<{ where: string; expr: string; group?: string }> = [
      ...(await ruleExpressions()),
      ...(await dashboardExpressions()),
    ];
    expect(expressions.length).toBeGreaterThan(20);
    const problems: string[] = [];
    const used = new Set<string>();
    for (const { where, expr, group } of expressions) {
      const { errors, selectors } = parsePromql(expr);
      problems.push(...errors.map((e) => `${where}: ${e}`));
      if (selectors.length === 0) problems.push(`${where}: selects no metric`);
      for (const { metric, exact } of selectors) {
        if (group === CRONJOB_GROUP) {
          if (!KUBE_STATE_METRICS.has(metric)) problems.push(`${where}: ${metric} is not a kube-state-metrics series these alerts know`);
          continue;
        }
        used.add(metric);
        if (PROMETHEUS_OWN.has(metric)) continue;
        if (!scrape.names.has(metric)) problems.push(`${where}: ${metric} is not exported`);
        for (const { label, value: wanted } of exact) {
          if (!scrape.series.some((l) => l.startsWith(`${metric}{`) && l.includes(`${label}="${wanted}"`)))
            problems.push(`${where}: no series ${metric}{${label}="${wanted}"}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // the alerts the issue asks for, by what they watch
    for (const metric of [
      'token_rotator_token_expiry_timestamp_seconds',
      'token_rotator_orphaned_tokens_total',
      'token_rotator_sink_drift',
      'token_rotator_consecutive_failures',
      'token_rotator_next_check_timestamp_seconds',
      'token_rotator_build_info',
    ]) {
      expect(used, metric).toContain(metric);
    }
  });

  it('the checker itself catches a broken expression and an unknown metric', () => {
    expect(parsePromql('rate(token_rotator_checks_total[5m]').errors).not.toEqual([]);
    expect(parsePromql('token_rotator_checks_total >').errors).not.toEqual([]);
    const { errors, selectors } = parsePromql('sum by (token) (increase(token_rotator_check_total{result="failure"}[1h])) > 0');
    expect(errors).toEqual([]);
    expect(selectors).toEqual([{ metric: 'token_rotator_check_total', exact: [{ label: 'result', value: 'failure' }], by: ['token'] }]);
    expect(parsePromql('max without (pod) (token_rotator_sink_drift) or token_rotator_sink_drift').selectors.map((s) => s.by)).toEqual([
      undefined,
      undefined,
    ]);
    expect(scrape.names.has('token_rotator_check_total')).toBe(false);
  });

  it('every alert on a per-token series aggregates it by token, without the pod or instance: two replicas page once', async () => {
    const perToken = new Set(scrape.series.filter((l) => /[{,]token="/.test(l)).map((l) => l.slice(0, l.indexOf('{'))));
    expect(perToken).toContain('token_rotator_token_expiry_timestamp_seconds');
    const problems: string[] = [];
    let checked = 0;
    for (const { where, expr } of await ruleExpressions()) {
      for (const { metric, by } of parsePromql(expr).selectors) {
        if (!perToken.has(metric)) continue;
        checked++;
        if (!by?.includes('token') || by.some((label) => PER_TARGET.has(label)))
          problems.push(`${where}: ${metric} is not aggregated by token (${by ? `by (${by.join(', ')})` : 'no aggregation'})`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(8);
  });

  it('the kustomization lists every file beside it', async () => {
    const kustomization = parseYaml(await readFile(join(monitoring, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      configMapGenerator: Array<{ files: string[] }>;
    };
    const listed = [...kustomization.resources, ...kustomization.configMapGenerator.flatMap((g) => g.files)].sort();
    expect(listed).toEqual(['grafana-dashboard.json', 'pod-monitor.yaml', 'prometheus-rule.yaml']);
  });
});

describe("config/monitoring: the CronJob shape's alerts", () => {
  it('read the Jobs of the CronJob the cronjob overlay renders, by its name, and no other Jobs', async () => {
    const objects = await renderKustomization(join(root, 'config/kubernetes/overlays/cronjob'));
    const cronJobs = objects.filter((o) => o.kind === 'CronJob').map((o) => o.metadata.name);
    expect(cronJobs).toHaveLength(1);
    const name = cronJobs[0]!;
    // The CronJob controller names each Job <cronjob>-<scheduled time in minutes since the epoch>.
    const jobOfRun = `${name}-${Math.floor(Date.UTC(2030, 0, 1) / 60_000)}`;
    const alerts = (await ruleExpressions()).filter((e) => e.group === CRONJOB_GROUP);
    expect(alerts.map((a) => a.where)).toEqual([
      'prometheus-rule.yaml TokenRotatorCronJobFailed',
      'prometheus-rule.yaml TokenRotatorCronJobNoSuccess',
    ]);
    for (const { where, expr } of alerts) {
      for (const { metric, exact, regex } of parsePromql(expr).selectors) {
        const at = `${where} ${metric}`;
        if (metric.startsWith('kube_cronjob_')) expect(exact, at).toContainEqual({ label: 'cronjob', value: name });
        if (metric.startsWith('kube_job_')) {
          const jobName = regex?.find((m) => m.label === 'job_name');
          expect(jobName, `${at}: selects the Jobs by name`).toBeDefined();
          const matches = (job: string) => new RegExp(`^(?:${jobName!.value})$`).test(job); // Prometheus anchors regex matchers
          expect(matches(jobOfRun), `${at} matches ${jobOfRun}`).toBe(true);
          for (const other of [`${name}-backup-${jobOfRun.split('-').pop()}`, `other-${jobOfRun}`, name])
            expect(matches(other), `${at} does not match ${other}`).toBe(false);
        }
      }
    }
  });
});
