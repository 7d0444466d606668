// The monitoring bundle for a Prometheus and a Grafana without the Prometheus Operator or the
// dashboard sidecar: the rule groups of every PrometheusRule as one rules file, and each dashboard
// ConfigMap's JSON as its own file. Taken from the rendered bundle, so that they never differ from it.
import { stringify } from 'yaml';

export const RULES_FILE = 'prometheus-rules.yaml';

/**
 * @param {Array<{ kind?: string, metadata?: { labels?: Record<string, string> }, spec?: { groups?: unknown[] }, data?: Record<string, string> }>} objects
 * @returns {Map<string, string>} file name to content
 */
export function plainMonitoringFiles(objects) {
  const files = new Map();
  const groups = objects.filter((object) => object.kind === 'PrometheusRule').flatMap((rule) => rule.spec?.groups ?? []);
  if (groups.length > 0)
    files.set(
      RULES_FILE,
      `# Prometheus rule files: rule_files: [${RULES_FILE}]. The PrometheusRules of monitoring.yaml, as one file.\n${stringify({ groups })}`,
    );
  for (const configMap of objects.filter(
    (object) => object.kind === 'ConfigMap' && object.metadata?.labels?.grafana_dashboard !== undefined,
  ))
    for (const [name, json] of Object.entries(configMap.data ?? {})) files.set(name, json);
  return files;
}
