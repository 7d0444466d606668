import type { Policy } from '../../config/types.js';

/**
 * `{policyId}` when the policy names another id than the one shown. The id shown is the one the
 * service was asked about: the current id the state holds, which each rotation replaces, while the
 * policy keeps the id it started from. Nothing when they agree, or for a name no longer in the policy.
 */
export type PolicyIdOf = (name: string, shown: string | null) => { policyId?: string };

export function policyIdOf(policy: Pick<Policy, 'tokens'>): PolicyIdOf {
  const ids = new Map(policy.tokens.map((t) => [t.name, t.id]));
  return (name, shown) => {
    const policyId = ids.get(name);
    if (policyId === undefined || policyId === shown) return {};
    return { policyId };
  };
}
