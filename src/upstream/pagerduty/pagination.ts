import { ValidationError } from '../../core/errors.ts';
import type { PageParams } from './params.ts';
import type { Page } from './schemas.ts';

/** Classic offset pagination: the limits checked before a list call is sent, its query, and walking its pages. */

/**
 * Classic pagination limits: `limit` at most 100, and `limit + offset` at most 10,000 (beyond that
 * the API answers 400). PagerDuty's pagination docs:
 * https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/09-Pagination.md
 */
export const PAGERDUTY_MAX_PAGE_LIMIT = 100;
export const PAGERDUTY_MAX_OFFSET_PLUS_LIMIT = 10_000;

export const checkPage = (p: PageParams, operation: string) => {
  const limit = p.limit;
  const offset = p.offset ?? 0;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > PAGERDUTY_MAX_PAGE_LIMIT)) {
    throw new ValidationError(
      `${operation}: limit must be an integer from 1 to ${PAGERDUTY_MAX_PAGE_LIMIT}`,
      {
        details: { limit },
      },
    );
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new ValidationError(`${operation}: offset must be a non-negative integer`, { details: { offset } });
  }
  if (offset + (limit ?? 25) > PAGERDUTY_MAX_OFFSET_PLUS_LIMIT) {
    throw new ValidationError(
      `${operation}: limit + offset may not exceed ${PAGERDUTY_MAX_OFFSET_PLUS_LIMIT} (PagerDuty classic pagination); narrow the filters or the date range`,
      { details: { limit: limit ?? 25, offset } },
    );
  }
};

export const pageQuery = (p: PageParams) => ({
  limit: p.limit,
  offset: p.offset,
  total: p.total === undefined ? undefined : String(p.total),
});

export const toPage = <T>(
  data: { limit: number; offset: number; more: boolean; total?: number | null | undefined },
  items: T[],
): Page<T> => ({
  items,
  limit: data.limit,
  offset: data.offset,
  more: data.more,
  total: data.total ?? null,
});

/** Walks `more` pages from `start.offset`, stopping at `maxItems` or the 10,000 window. */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<Page<T>>,
  start: { limit?: number; offset?: number; maxItems?: number } = {},
): AsyncGenerator<T, void, undefined> {
  const limit = start.limit ?? PAGERDUTY_MAX_PAGE_LIMIT;
  let offset = start.offset ?? 0;
  let yielded = 0;
  const max = start.maxItems ?? Number.POSITIVE_INFINITY;
  for (;;) {
    const room = PAGERDUTY_MAX_OFFSET_PLUS_LIMIT - offset;
    if (room <= 0) return;
    const page = await fetchPage({ limit: Math.min(limit, room), offset });
    for (const item of page.items) {
      if (yielded >= max) return;
      yield item;
      yielded += 1;
    }
    if (!page.more || page.items.length === 0 || yielded >= max) return;
    offset += page.items.length;
  }
}
