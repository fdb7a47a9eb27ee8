import type { ServiceRef } from '../../machines/incident/events.ts';
import { ChatOpsError } from '../core/errors.ts';
import { escapeMrkdwn, truncate } from '../slack/text.ts';

/**
 * The incident service's services, by name or id, for `/incident trigger <service> <title>`,
 * `/incident subscribe <service>`, `/oncall <service>` and the trigger form's service list.
 *
 * The list is fetched on demand and kept for `ttlMs` (5 min); `cached()` never waits, so the
 * trigger form can be opened inside Slack's 3 s trigger window with whatever is known (the form
 * falls back to a text field when nothing is).
 *
 * @example
 * const services = createServiceDirectory({ listServices: () => fetchAll(), now: () => Date.now() });
 * await services.resolve('payments api'); // { id: 'PSVC001', name: 'Payments API' }
 * await services.split('Payments API db-primary disk 95%'); // { service, rest: 'db-primary disk 95%' }
 */
export type ServiceEntry = Readonly<{ id: string; name: string; escalationPolicyId: string | null }>;

export type ServiceDirectoryDeps = Readonly<{
  /** Every service (the composition root pages through `GET /services`). */
  listServices(): Promise<readonly ServiceEntry[]>;
  now(): number;
  ttlMs?: number;
}>;

export type ServiceDirectory = Readonly<{
  /** The service a user means: an id, an exact name, or a unique name prefix (case-insensitive). */
  resolve(query: string): Promise<ServiceEntry>;
  /**
   * Splits `<service> <title>` where the service name may contain spaces: the longest known
   * service name (or id) the text starts with; else the first word, as a service query.
   */
  split(text: string): Promise<{ service: ServiceEntry; rest: string }>;
  /** The list as last fetched, without waiting (and refreshes it in the background when old). */
  cached(): readonly ServiceEntry[] | undefined;
  all(): Promise<readonly ServiceEntry[]>;
}>;

const norm = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();

export const toServiceRef = (s: ServiceEntry): ServiceRef => ({ id: s.id, name: s.name });

export const createServiceDirectory = (deps: ServiceDirectoryDeps): ServiceDirectory => {
  const ttlMs = deps.ttlMs ?? 5 * 60_000;
  let list: readonly ServiceEntry[] | undefined;
  let fetchedAt = 0;
  let inflight: Promise<readonly ServiceEntry[]> | undefined;

  const refresh = (): Promise<readonly ServiceEntry[]> => {
    inflight ??= deps
      .listServices()
      .then((services) => {
        list = services;
        fetchedAt = deps.now();
        return services;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  const all = async (): Promise<readonly ServiceEntry[]> =>
    list && deps.now() - fetchedAt < ttlMs ? list : refresh();

  const notFound = (query: string, services: readonly ServiceEntry[], extra = ''): ChatOpsError =>
    new ChatOpsError(
      'SB_NOT_FOUND',
      // Shown as mrkdwn (the refusal's reply): what was typed and the vendor's names are escaped.
      `No service matches “${escapeMrkdwn(truncate(query, 200))}” in the incident service${extra}. Services: ${
        services
          .slice(0, 20)
          .map((s) => escapeMrkdwn(s.name))
          .join(', ') || 'none'
      }.`,
      { details: { reason: 'unknown_service', query } },
    );

  const match = (services: readonly ServiceEntry[], query: string): ServiceEntry[] => {
    const q = norm(query);
    const byId = services.filter((s) => s.id.toLowerCase() === q);
    if (byId.length) return byId;
    const exact = services.filter((s) => norm(s.name) === q);
    if (exact.length) return exact;
    return services.filter((s) => norm(s.name).startsWith(q));
  };

  return {
    all,
    cached() {
      if (!list || deps.now() - fetchedAt >= ttlMs) void refresh().catch(() => undefined);
      return list;
    },
    async resolve(query) {
      const services = await all();
      const found = match(services, query);
      if (found.length === 1) return found[0]!;
      if (found.length > 1) throw notFound(query, found, ' uniquely (several start that way)');
      throw notFound(query, services);
    },
    async split(text) {
      const services = await all();
      const t = norm(text);
      let best: { service: ServiceEntry; length: number; words: number } | undefined;
      for (const s of services) {
        for (const key of [norm(s.name), s.id.toLowerCase()]) {
          if ((t === key || t.startsWith(`${key} `)) && (!best || key.length > best.length)) {
            best = { service: s, length: key.length, words: key.split(' ').length };
          }
        }
      }
      const words = text.trim().split(/\s+/);
      if (best) return { service: best.service, rest: words.slice(best.words).join(' ') };
      const first = words[0] ?? '';
      const found = match(services, first);
      if (found.length === 1) return { service: found[0]!, rest: words.slice(1).join(' ') };
      throw notFound(first, services);
    },
  };
};
