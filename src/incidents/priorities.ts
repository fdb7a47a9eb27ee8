import type { Priority } from '../../machines/incident/events.ts';
import { ChatOpsError } from '../core/errors.ts';
import { escapeMrkdwn, truncate } from '../slack/text.ts';

/**
 * The incident service's priorities (`GET /priorities`: the account's list, most to least severe),
 * for the card's priority select and `/incident priority <n> <P1…>`.
 *
 * Read once and kept for `ttlMs` (15 min: an account's priorities change rarely, and a name
 * nobody knows is looked up again at once, so a priority added in the web app is found without
 * waiting). `cached()` never waits, so a card is drawn with whatever is known (no select until
 * the list was read once); it starts a refresh in the background when the list is old.
 *
 * @example
 * const priorities = createPriorityDirectory({ listPriorities, now: () => Date.now() });
 * await priorities.resolve('p1'); // { id: 'PPRI001', name: 'P1' }
 */
export type PriorityDirectoryDeps = Readonly<{
  /** Every priority, in the vendor's order (the composition root pages through `GET /priorities`). */
  listPriorities(): Promise<readonly Priority[]>;
  now(): number;
  ttlMs?: number;
}>;

export type PriorityDirectory = Readonly<{
  /** The priority a person means: its id, or its name (case-insensitive). Refuses in words. */
  resolve(query: string): Promise<Priority>;
  /** The list as last read, without waiting; undefined before the first read. */
  cached(): readonly Priority[] | undefined;
  all(): Promise<readonly Priority[]>;
}>;

export const PRIORITIES_TTL_MS = 15 * 60_000;

const norm = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();

/** `P1, P2, P3` (escaped), for refusals and help. */
export const priorityNames = (list: readonly Priority[]): string =>
  list
    .slice(0, 25)
    .map((p) => escapeMrkdwn(truncate(p.name, 40)))
    .join(', ');

export const createPriorityDirectory = (deps: PriorityDirectoryDeps): PriorityDirectory => {
  const ttlMs = deps.ttlMs ?? PRIORITIES_TTL_MS;
  let list: readonly Priority[] | undefined;
  let fetchedAt = 0;
  let inflight: Promise<readonly Priority[]> | undefined;

  const refresh = (): Promise<readonly Priority[]> => {
    inflight ??= deps
      .listPriorities()
      .then((priorities) => {
        list = priorities;
        fetchedAt = deps.now();
        return priorities;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  const fresh = () => list !== undefined && deps.now() - fetchedAt < ttlMs;
  const all = async (): Promise<readonly Priority[]> => (fresh() ? list! : refresh());

  const find = (priorities: readonly Priority[], query: string): Priority | undefined => {
    const q = norm(query);
    return priorities.find((p) => p.id.toLowerCase() === q) ?? priorities.find((p) => norm(p.name) === q);
  };

  return {
    all,
    cached() {
      if (!fresh()) void refresh().catch(() => undefined);
      return list;
    },
    async resolve(query) {
      let priorities = await all();
      let found = find(priorities, query);
      // Not in a list read a while ago: it may have been added since.
      if (!found && fetchedAt !== deps.now()) {
        priorities = await refresh();
        found = find(priorities, query);
      }
      if (found) return found;
      throw new ChatOpsError(
        'SB_NOT_FOUND',
        priorities.length === 0
          ? 'The incident service has no priorities set up, so there is none to set. An admin can add them in its settings.'
          : `“${escapeMrkdwn(truncate(query, 40))}” is not a priority in the incident service. Its priorities: ${priorityNames(priorities)}.`,
        { details: { reason: 'unknown_priority', query } },
      );
    },
  };
};
