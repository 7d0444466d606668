import { type FieldError, invalid, required } from '../field-errors.js';
import { isJsonObject, type JsonObject, stringAt, stringMapAt } from '../json.js';
import { isDns1123Label } from '../name-rules.js';
import { validateAnnotations, validateLabels } from '../object-meta.js';

/*
 * The pod template of a workload: the core/v1 defaulters that fill it in, and the checks of it the
 * double makes (a small part of ValidatePodTemplateSpec).
 */

const PROBE_DEFAULTS = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };

function containers(spec: JsonObject, field: string): JsonObject[] {
  const list = spec[field];
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/** SetDefaults_PodSpec and SetDefaults_Container, for what a template usually holds. */
export function defaultPodTemplate(template: JsonObject): void {
  const spec = isJsonObject(template.spec) ? template.spec : (template.spec = {});
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of containers(spec, field)) {
      container.terminationMessagePath ??= '/dev/termination-log';
      container.terminationMessagePolicy ??= 'File';
      container.imagePullPolicy ??= pullPolicyFor(stringAt(container, 'image') ?? '');
      // ResourceRequirements is not a pointer: Go always writes it.
      container.resources ??= {};
      const ports = container.ports;
      if (Array.isArray(ports)) for (const port of ports) if (isJsonObject(port)) port.protocol ??= 'TCP';
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const value = container[probe];
        if (isJsonObject(value)) for (const [k, v] of Object.entries(PROBE_DEFAULTS)) value[k] ??= v;
      }
    }
  }
}

/** Always for `:latest` or no tag (and no digest), IfNotPresent otherwise. */
function pullPolicyFor(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  const tag = colon >= 0 ? image.slice(colon + 1) : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

export function validatePodTemplate(template: JsonObject | undefined, path: string): FieldError[] {
  if (!template) return [required(path)];
  const errors: FieldError[] = [];
  const metadata = isJsonObject(template.metadata) ? template.metadata : {};
  errors.push(...validateLabels(stringMapAt(metadata, 'labels'), `${path}.metadata.labels`));
  errors.push(...validateAnnotations(stringMapAt(metadata, 'annotations'), `${path}.metadata.annotations`));
  const spec = isJsonObject(template.spec) ? template.spec : {};
  const list = containers(spec, 'containers');
  if (list.length === 0) errors.push(required(`${path}.spec.containers`));
  const seen = new Set<string>();
  list.forEach((container, i) => {
    const at = `${path}.spec.containers[${i}]`;
    const name = stringAt(container, 'name') ?? '';
    if (!name) errors.push(required(`${at}.name`));
    else {
      for (const message of isDns1123Label(name)) errors.push(invalid(`${at}.name`, name, message));
      if (seen.has(name)) errors.push({ type: 'Duplicate', field: `${at}.name`, value: name });
      seen.add(name);
    }
    if (!stringAt(container, 'image')) errors.push(required(`${at}.image`));
  });
  const restartPolicy = stringAt(spec, 'restartPolicy');
  if (restartPolicy !== undefined && restartPolicy !== 'Always') {
    errors.push({ type: 'NotSupported', field: `${path}.spec.restartPolicy`, value: restartPolicy, detail: 'supported values: "Always"' });
  }
  return errors;
}

/** The Containers and Images cells of the workload printers. */
export function containerCells(template: JsonObject | undefined): [string, string] {
  const spec = isJsonObject(template?.spec) ? template.spec : {};
  const list = containers(spec, 'containers');
  return [list.map((c) => stringAt(c, 'name') ?? '').join(','), list.map((c) => stringAt(c, 'image') ?? '').join(',')];
}
