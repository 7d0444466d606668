/*
 * IAM as far as the double needs it: allow grants of permissions (or of roles, expanded to their
 * permissions) to a member on a project or a secret, inherited from project to secret, and deny
 * rules (IAM deny policies) that win over any grant. Resources are canonical names with project
 * numbers: `projects/123` and `projects/123/secrets/s`.
 */

/**
 * The custom role docs/sinks/gcp-secret-manager.md gives the sink, exactly (test/unit/docs-snippets.test.ts
 * holds them equal): what a rotator's service account is granted in the tests.
 */
export const README_ROLE: readonly string[] = [
  'secretmanager.secrets.get',
  'secretmanager.secrets.create',
  'secretmanager.secrets.update',
  'secretmanager.versions.add',
  'secretmanager.versions.access',
];

/** The predefined roles the README and the tests speak of, with their Secret Manager permissions. */
export const ROLES: Record<string, readonly string[]> = {
  'roles/secretmanager.admin': [
    'secretmanager.secrets.create',
    'secretmanager.secrets.delete',
    'secretmanager.secrets.get',
    'secretmanager.secrets.getIamPolicy',
    'secretmanager.secrets.list',
    'secretmanager.secrets.setIamPolicy',
    'secretmanager.secrets.update',
    'secretmanager.versions.access',
    'secretmanager.versions.add',
    'secretmanager.versions.destroy',
    'secretmanager.versions.disable',
    'secretmanager.versions.enable',
    'secretmanager.versions.get',
    'secretmanager.versions.list',
  ],
  'roles/secretmanager.secretAccessor': ['secretmanager.versions.access'],
  'roles/secretmanager.secretVersionAdder': ['secretmanager.versions.add'],
  'roles/secretmanager.secretVersionManager': [
    'secretmanager.versions.add',
    'secretmanager.versions.destroy',
    'secretmanager.versions.disable',
    'secretmanager.versions.enable',
    'secretmanager.versions.get',
    'secretmanager.versions.list',
  ],
  'roles/secretmanager.viewer': [
    'secretmanager.secrets.get',
    'secretmanager.secrets.getIamPolicy',
    'secretmanager.secrets.list',
    'secretmanager.versions.get',
    'secretmanager.versions.list',
  ],
};

const expand = (grant: string | readonly string[]): string[] =>
  (typeof grant === 'string' ? [grant] : [...grant]).flatMap((g) => {
    if (!g.startsWith('roles/')) return [g];
    const role = ROLES[g];
    if (!role) throw new Error(`the double knows no role ${g}`);
    return [...role];
  });

export class Iam {
  readonly #allow = new Map<string, Set<string>>();
  readonly #deny = new Map<string, Set<string>>();

  grant(member: string, resource: string, grant: string | readonly string[]): void {
    this.#add(this.#allow, member, resource, expand(grant));
  }

  /** An IAM deny rule: the permissions are refused on the resource and below, whatever is granted. */
  deny(member: string, resource: string, permissions: string | readonly string[]): void {
    this.#add(this.#deny, member, resource, expand(permissions));
  }

  /** Removes every grant and deny rule on a resource and below (a deleted secret takes its policy along). */
  forget(resource: string): void {
    for (const table of [this.#allow, this.#deny])
      for (const key of [...table.keys()]) if (key.split(' ', 2)[1]!.startsWith(resource)) table.delete(key);
  }

  clear(): void {
    this.#allow.clear();
    this.#deny.clear();
  }

  /** Whether `member` holds `permission` on the resource named last in `chain` (from the project down). */
  allows(member: string, chain: readonly string[], permission: string): boolean {
    const has = (table: Map<string, Set<string>>) => chain.some((resource) => table.get(`${member} ${resource}`)?.has(permission) ?? false);
    return has(this.#allow) && !has(this.#deny);
  }

  #add(table: Map<string, Set<string>>, member: string, resource: string, permissions: string[]): void {
    const key = `${member} ${resource}`;
    const set = table.get(key) ?? new Set<string>();
    for (const permission of permissions) set.add(permission);
    table.set(key, set);
  }
}
