/**
 * Someone on call whom paging passed over (on leave, left, unreachable), why in words, and who is
 * paged in their place (Slack user ids): the card's "Assigned" names who is really paged (issue 20).
 * Built from the page activity by blocks/pagingSummary.ts `pagedInstead`; its own file so the card
 * can name it without importing the summary (no import loop).
 */
export type PagedInstead = Readonly<{
  why: string;
  instead: readonly string[];
  /** When nobody stands in at their level: what happens instead (`level 2 is paged`), else null. */
  otherwise: string | null;
}>;
