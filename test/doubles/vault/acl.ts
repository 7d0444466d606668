/**
 * Vault's ACL policies, as far as the double needs them: the HCL of `vault policy write` reduced to
 * `path "…" { capabilities = [ … ] }` blocks, and the matching rules of Vault's ACL
 * (openbao/openbao internal/vault/policy/acl.go): an exact path wins; else the best of the longest
 * `*` prefix and the `+` segment wildcards, by first wildcard position, then non-prefix over
 * prefix, fewer wildcards, longer pattern. The rules of one path in several policies are merged;
 * `deny` among them wins.
 */

export const CAPABILITIES = ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny', 'scan'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface PolicyRule {
  path: string;
  capabilities: Capability[];
}

/** Parses the HCL of a policy: `path` blocks with `capabilities`, comments (`#`, `//`, `/* *\/`). */
export function parsePolicy(hcl: string): PolicyRule[] {
  const tokens = tokenize(hcl);
  const rules: PolicyRule[] = [];
  let i = 0;
  const expect = (value: string) => {
    const token = tokens[i++];
    if (token?.value !== value)
      throw new Error(`policy: expected ${value} at ${token?.at ?? 'the end'}, found ${token?.value ?? 'nothing'}`);
  };
  const string = (): string => {
    const token = tokens[i++];
    if (token?.kind !== 'string') throw new Error(`policy: expected a string at ${token?.at ?? 'the end'}`);
    return token.value;
  };
  while (i < tokens.length) {
    expect('path');
    const path = string();
    expect('{');
    let capabilities: Capability[] | undefined;
    while (tokens[i]?.value !== '}') {
      const key = tokens[i++];
      if (key?.value !== 'capabilities') throw new Error(`policy: the double knows only capabilities in a path block, not ${key?.value}`);
      expect('=');
      expect('[');
      capabilities = [];
      while (tokens[i]?.value !== ']') {
        const capability = string();
        if (!(CAPABILITIES as readonly string[]).includes(capability)) throw new Error(`policy: unknown capability ${capability}`);
        capabilities.push(capability as Capability);
        if (tokens[i]?.value === ',') i++;
      }
      expect(']');
    }
    expect('}');
    rules.push({ path: path.replace(/^\/+/, ''), capabilities: capabilities ?? [] });
  }
  return rules;
}

function tokenize(hcl: string): Array<{ kind: 'word' | 'string' | 'punct'; value: string; at: number }> {
  const out: Array<{ kind: 'word' | 'string' | 'punct'; value: string; at: number }> = [];
  let i = 0;
  while (i < hcl.length) {
    const c = hcl[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '#' || hcl.startsWith('//', i)) while (i < hcl.length && hcl[i] !== '\n') i++;
    else if (hcl.startsWith('/*', i)) i = hcl.indexOf('*/', i + 2) < 0 ? hcl.length : hcl.indexOf('*/', i + 2) + 2;
    else if ('{}[]=,'.includes(c)) out.push({ kind: 'punct', value: c, at: i++ });
    else if (c === '"') {
      const end = hcl.indexOf('"', i + 1);
      if (end < 0) throw new Error('policy: unterminated string');
      out.push({ kind: 'string', value: hcl.slice(i + 1, end), at: i });
      i = end + 1;
    } else {
      const match = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(hcl.slice(i));
      if (!match) throw new Error(`policy: unexpected ${c} at ${i}`);
      out.push({ kind: 'word', value: match[0], at: i });
      i += match[0].length;
    }
  }
  return out;
}

interface Permissions {
  capabilities: Set<Capability>;
}

interface WildcardCandidate {
  firstWildcard: number;
  isPrefix: boolean;
  wildcards: number;
  pattern: string;
  permissions: Permissions;
}

/** The merged rules of a token's policies. */
export class Acl {
  readonly root: boolean;
  readonly #exact = new Map<string, Permissions>();
  readonly #prefix = new Map<string, Permissions>();
  readonly #segment = new Map<string, Permissions>();

  constructor(rules: readonly PolicyRule[], options: { root?: boolean } = {}) {
    this.root = options.root ?? false;
    for (const rule of rules) {
      const table = rule.path.includes('+') ? this.#segment : rule.path.endsWith('*') ? this.#prefix : this.#exact;
      const key = table === this.#prefix ? rule.path.slice(0, -1) : rule.path;
      const merged = table.get(key) ?? { capabilities: new Set<Capability>() };
      for (const c of rule.capabilities) merged.capabilities.add(c);
      if (merged.capabilities.has('deny')) merged.capabilities = new Set(['deny']);
      table.set(key, merged);
    }
  }

  /** The capabilities on `path`, as `sys/capabilities-self` gives them: sorted, `deny` for none, `root` for root. */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const found = this.permissions(path.replace(/^\/+/, ''));
    const caps = [...(found?.capabilities ?? [])].filter((c) => c !== 'deny');
    if (!found || found.capabilities.has('deny') || caps.length === 0) return ['deny'];
    return caps.sort();
  }

  allows(path: string, capability: Capability): boolean {
    if (this.root) return true;
    const found = this.permissions(path.replace(/^\/+/, ''));
    return !!found && !found.capabilities.has('deny') && found.capabilities.has(capability);
  }

  /**
   * Whether the token may see a mount (Vault's hasMountAccess): any capability but deny on the
   * mount's path, or on any path under it.
   */
  seesMount(mountPath: string): boolean {
    if (this.root) return true;
    if (!this.capabilities(mountPath).includes('deny')) return true;
    const grants = (p: Permissions) => !p.capabilities.has('deny') && p.capabilities.size > 0;
    for (const [path, p] of this.#exact) if (path.startsWith(mountPath) && grants(p)) return true;
    for (const [path, p] of this.#prefix) if (path.startsWith(mountPath) && grants(p)) return true;
    for (const [pattern, p] of this.#segment) {
      const parts = pattern.replace(/\*$/, '').split('/');
      const mountParts = mountPath.replace(/\/$/, '').split('/');
      if (grants(p) && mountParts.every((m, i) => parts[i] === undefined || parts[i] === '+' || parts[i] === m)) return true;
    }
    return false;
  }

  private permissions(path: string): Permissions | undefined {
    const exact = this.#exact.get(path);
    if (exact) return exact;
    const candidates: WildcardCandidate[] = [];
    let longest: string | undefined;
    for (const prefix of this.#prefix.keys()) {
      if (path.startsWith(prefix) && (longest === undefined || prefix.length > longest.length)) longest = prefix;
    }
    if (longest !== undefined) {
      if (this.#segment.size === 0) return this.#prefix.get(longest);
      candidates.push({
        firstWildcard: longest.length,
        isPrefix: true,
        wildcards: 0,
        pattern: longest,
        permissions: this.#prefix.get(longest)!,
      });
    }
    const parts = path.split('/');
    for (const [full, permissions] of this.#segment) {
      const isPrefix = full.endsWith('*');
      const pattern = isPrefix ? full.slice(0, -1) : full;
      const patternParts = pattern.split('/');
      if (parts.length < patternParts.length) continue;
      if (!isPrefix && parts.length !== patternParts.length) continue;
      let wildcards = 0;
      const matches = patternParts.every((p, i) => {
        if (p === '+') return ++wildcards > 0;
        if (p === parts[i]) return true;
        return isPrefix && i === patternParts.length - 1 && parts[i]!.startsWith(p);
      });
      if (matches) candidates.push({ firstWildcard: full.indexOf('+'), isPrefix, wildcards, pattern, permissions });
    }
    if (candidates.length === 0) return undefined;
    candidates.sort(lowerPriorityFirst);
    return candidates.at(-1)!.permissions;
  }
}

/** Vault's ordering of wildcard matches, lowest priority first. */
function lowerPriorityFirst(a: WildcardCandidate, b: WildcardCandidate): number {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard < b.firstWildcard ? -1 : 1;
  if (a.isPrefix !== b.isPrefix) return a.isPrefix ? -1 : 1;
  if (a.wildcards !== b.wildcards) return a.wildcards > b.wildcards ? -1 : 1;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length < b.pattern.length ? -1 : 1;
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}

/** The parts of Vault's built-in `default` policy that a client of the KV engine meets. */
export const DEFAULT_POLICY = `
# Allow tokens to look up their own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}
# Allow tokens to renew themselves
path "auth/token/renew-self" {
    capabilities = ["update"]
}
# Allow tokens to revoke themselves
path "auth/token/revoke-self" {
    capabilities = ["update"]
}
# Allow a token to look up its own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}
`;
