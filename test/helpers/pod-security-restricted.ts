import type { Container, PodTemplate, SecurityContext } from './kustomize.js';

/**
 * The Pod Security Standards' `restricted` profile (which includes `baseline`), as the Kubernetes
 * documentation states its controls (concepts/security/pod-security-standards, as of v1.35): each
 * rule below is one control's restricted fields and allowed values, for a Linux pod. Returns one
 * line per violation, naming the field; none for a pod the profile admits.
 *
 * A reading of the documented rules for tests of our own manifests, not the admission plugin: the
 * AppArmor annotations and sysctls are checked only for what our pods could set.
 */
export function restrictedViolations(template: PodTemplate): string[] {
  const spec = template.spec;
  const pod = spec.securityContext ?? {};
  const problems: string[] = [];
  const containers: Array<{ at: string; container: Container }> = [
    ...(spec.initContainers ?? []).map((container, i) => ({ at: `spec.initContainers[${i}] (${container.name})`, container })),
    ...spec.containers.map((container, i) => ({ at: `spec.containers[${i}] (${container.name})`, container })),
    ...(spec.ephemeralContainers ?? []).map((container, i) => ({ at: `spec.ephemeralContainers[${i}] (${container.name})`, container })),
  ];

  // Baseline: host namespaces, HostProcess, hostPath, sysctls, pod-level seccomp, SELinux, AppArmor.
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
    if (spec[field]) problems.push(`spec.${field} must be unset or false`);
  problems.push(...contextViolations('spec.securityContext', pod));
  for (const volume of spec.volumes ?? []) {
    const types = Object.keys(volume).filter((key) => key !== 'name' && volume[key] !== undefined && volume[key] !== null);
    for (const type of types.filter((t) => !ALLOWED_VOLUME_TYPES.has(t)))
      problems.push(`spec.volumes (${volume.name}): ${type} is not an allowed volume type`);
  }
  for (const sysctl of pod.sysctls ?? [])
    if (!SAFE_SYSCTLS.has(sysctl.name)) problems.push(`spec.securityContext.sysctls: ${sysctl.name} is not a safe sysctl`);
  for (const [key, value] of Object.entries(template.metadata?.annotations ?? {}))
    if (
      key.startsWith('container.apparmor.security.beta.kubernetes.io/') &&
      !(value === 'runtime/default' || value.startsWith('localhost/'))
    )
      problems.push(`metadata.annotations[${key}] must be runtime/default or localhost/*`);
  // Restricted, pod level.
  if (pod.runAsNonRoot === false) problems.push('spec.securityContext.runAsNonRoot must be true or unset');
  if (pod.runAsGroup === 0 || pod.fsGroup === 0 || pod.supplementalGroups?.includes(0))
    problems.push('spec.securityContext: no root group (runAsGroup, fsGroup, supplementalGroups)');

  for (const { at, container } of containers) {
    const own = container.securityContext ?? {};
    const where = `${at}.securityContext`;
    problems.push(...contextViolations(where, own));
    if (own.privileged) problems.push(`${where}.privileged must be unset or false`);
    if (own.procMount !== undefined && own.procMount !== 'Default') problems.push(`${where}.procMount must be Default`);
    for (const port of container.ports ?? []) if (port.hostPort) problems.push(`${at}.ports: hostPort ${port.hostPort} must be unset or 0`);
    for (const [kind, probe] of Object.entries({
      livenessProbe: container.livenessProbe,
      readinessProbe: container.readinessProbe,
      startupProbe: container.startupProbe,
      'lifecycle.postStart': container.lifecycle?.postStart,
      'lifecycle.preStop': container.lifecycle?.preStop,
    }))
      if (probe?.httpGet?.host || probe?.tcpSocket?.host) problems.push(`${at}.${kind}: host must be unset`);
    // Restricted: every container, its own setting or the pod's where the profile allows it.
    if (own.allowPrivilegeEscalation !== false) problems.push(`${where}.allowPrivilegeEscalation must be false`);
    if ((own.runAsNonRoot ?? pod.runAsNonRoot) !== true) problems.push(`${where}.runAsNonRoot must be true (here or on the pod)`);
    if (own.runAsUser === 0 || (own.runAsUser === undefined && pod.runAsUser === 0)) problems.push(`${where}.runAsUser must not be 0`);
    if (own.runAsGroup === 0) problems.push(`${where}.runAsGroup must not be 0`);
    const seccomp = own.seccompProfile?.type ?? pod.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      problems.push(`${where}.seccompProfile.type must be RuntimeDefault or Localhost (here or on the pod)`);
    if (!own.capabilities?.drop?.includes('ALL')) problems.push(`${where}.capabilities.drop must include ALL`);
    for (const added of own.capabilities?.add ?? [])
      if (added !== 'NET_BIND_SERVICE') problems.push(`${where}.capabilities.add: ${added} (only NET_BIND_SERVICE may be added)`);
  }
  return problems;
}

/** The baseline controls a pod's and a container's securityContext share. */
function contextViolations(where: string, context: SecurityContext): string[] {
  const problems: string[] = [];
  if (context.windowsOptions?.hostProcess) problems.push(`${where}.windowsOptions.hostProcess must be unset or false`);
  if (context.seccompProfile?.type === 'Unconfined') problems.push(`${where}.seccompProfile.type must not be Unconfined`);
  const appArmor = context.appArmorProfile?.type;
  if (appArmor !== undefined && appArmor !== 'RuntimeDefault' && appArmor !== 'Localhost')
    problems.push(`${where}.appArmorProfile.type must be RuntimeDefault or Localhost`);
  const seLinux = context.seLinuxOptions;
  if (seLinux?.type && !SELINUX_TYPES.has(seLinux.type)) problems.push(`${where}.seLinuxOptions.type ${seLinux.type} is not allowed`);
  if (seLinux?.user || seLinux?.role) problems.push(`${where}.seLinuxOptions: user and role must be unset`);
  return problems;
}

/** The restricted profile's volume types: every volume must set one of these, and nothing else. */
const ALLOWED_VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const SELINUX_TYPES = new Set(['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
