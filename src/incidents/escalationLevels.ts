import type { ServiceDirectory } from './services.ts';

/**
 * How many levels a service's escalation policy has, so Switchboard offers Escalate only while
 * there is a next level and refuses `/incident escalate` past the last one with a sentence, instead
 * of letting the incident service refuse it ("Escalation level must be between 1 and 2").
 *
 * A policy's levels are its `escalation_rules` (GET /escalation_policies/{id}), kept for `ttlMs`
 * (5 min). The service → policy link comes from the service directory. Unknown (lookup failed, no
 * policy) is null: callers then offer escalation as before and let the service decide.
 *
 * @example
 * const levels = createEscalationLevels({ services, getEscalationPolicy: (id) => pd.getEscalationPolicy(id), now });
 * await levels.lastLevel('PSVC001'); // 2
 */
export type EscalationLevels = Readonly<{
  /** The last level of the service's escalation policy, or null when not known. Never throws. */
  lastLevel(serviceId: string): Promise<number | null>;
}>;

export type EscalationLevelsDeps = Readonly<{
  services: Pick<ServiceDirectory, 'all'>;
  getEscalationPolicy(id: string): Promise<{ escalation_rules: readonly unknown[] }>;
  now(): number;
  ttlMs?: number;
}>;

export const createEscalationLevels = (deps: EscalationLevelsDeps): EscalationLevels => {
  const ttlMs = deps.ttlMs ?? 5 * 60_000;
  const policies = new Map<string, { levels: number; at: number }>();

  const levelsOfPolicy = async (policyId: string): Promise<number | null> => {
    const known = policies.get(policyId);
    if (known && deps.now() - known.at < ttlMs) return known.levels;
    try {
      const policy = await deps.getEscalationPolicy(policyId);
      const levels = policy.escalation_rules.length;
      policies.set(policyId, { levels, at: deps.now() });
      return levels;
    } catch {
      return known?.levels ?? null;
    }
  };

  return {
    async lastLevel(serviceId) {
      try {
        const service = (await deps.services.all()).find((s) => s.id === serviceId);
        if (!service?.escalationPolicyId) return null;
        const levels = await levelsOfPolicy(service.escalationPolicyId);
        return levels !== null && levels > 0 ? levels : null;
      } catch {
        return null;
      }
    },
  };
};
