import { DatabaseSync } from 'node:sqlite';
import { ChatOpsError, type ErrorCode } from '../../src/core/errors.ts';

/**
 * A stand-in for a vendor's issue tracker, at the network edge of the ticket test lifecycle: it
 * files tickets, answers "what do you have for this ticket?", and can be told to fail. Kept in a
 * SQLite file (or in memory) so a child process that is killed and one started after it see the
 * same tracker, as they would a real vendor. Like many vendors, it has no idempotency key: filing
 * twice files twice, which is what "check before repeating" is for.
 */
export type TicketTracker = Readonly<{
  /** Files a ticket; returns the tracker's id. Fails as told by `failNext`. */
  file(ticketId: string, title: string): Promise<string>;
  /** The tracker's id of what was filed for this ticket, if anything. */
  find(ticketId: string): Promise<string | null>;
  /** Lookups of `find` (to prove a check ran, or did not). */
  finds(): number;
  /** Calls of `file`, failed ones included, in order. */
  calls(): readonly { ticketId: string; outcome: 'filed' | 'failed' }[];
  /** Everything filed, per ticket (a count above 1 is a duplicate). */
  filed(ticketId: string): number;
  /**
   * The next `times` calls of `file` fail with `code` (default SB_UPSTREAM_UNAVAILABLE, a 503);
   * `afterApply` files the ticket before failing (the answer was lost on the way back).
   */
  failNext(
    options?: Readonly<{
      times?: number;
      code?: ErrorCode;
      status?: number;
      afterApply?: boolean;
      /** The wait the tracker asks for (`details.retryAfterMs`, as a client puts a 429's reset). */
      retryAfterMs?: number;
    }>,
  ): void;
  close(): void;
}>;

export const openTicketTracker = (path = ':memory:'): TicketTracker => {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS filed (seq INTEGER PRIMARY KEY AUTOINCREMENT, ticket_id TEXT NOT NULL, title TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, ticket_id TEXT NOT NULL, outcome TEXT NOT NULL);`);
  const insertFiled = db.prepare('INSERT INTO filed (ticket_id, title) VALUES (?, ?)');
  const insertCall = db.prepare('INSERT INTO calls (ticket_id, outcome) VALUES (?, ?)');
  const findFiled = db.prepare('SELECT seq FROM filed WHERE ticket_id = ? ORDER BY seq LIMIT 1');
  const countFiled = db.prepare('SELECT COUNT(*) AS n FROM filed WHERE ticket_id = ?');
  const allCalls = db.prepare('SELECT ticket_id, outcome FROM calls ORDER BY seq');
  let faults:
    | { times: number; code: ErrorCode; status: number; afterApply: boolean; retryAfterMs?: number }
    | undefined;
  let finds = 0;
  const vendorId = (seq: unknown) => `TRK-${String(seq)}`;

  return {
    async file(ticketId, title) {
      const fault = faults && faults.times > 0 ? faults : undefined;
      if (fault) {
        fault.times -= 1;
        if (fault.afterApply) insertFiled.run(ticketId, title);
        insertCall.run(ticketId, 'failed');
        throw new ChatOpsError(fault.code, `tracker answered ${fault.status}`, {
          details: {
            status: fault.status,
            ...(fault.retryAfterMs === undefined ? {} : { retryAfterMs: fault.retryAfterMs }),
          },
        });
      }
      const { lastInsertRowid } = insertFiled.run(ticketId, title);
      insertCall.run(ticketId, 'filed');
      return vendorId(lastInsertRowid);
    },
    async find(ticketId) {
      finds += 1;
      const row = findFiled.get(ticketId) as { seq: number } | undefined;
      return row ? vendorId(row.seq) : null;
    },
    finds: () => finds,
    calls: () =>
      (allCalls.all() as { ticket_id: string; outcome: 'filed' | 'failed' }[]).map((r) => ({
        ticketId: r.ticket_id,
        outcome: r.outcome,
      })),
    filed: (ticketId) => (countFiled.get(ticketId) as { n: number }).n,
    failNext(options = {}) {
      faults = {
        times: options.times ?? 1,
        code: options.code ?? 'SB_UPSTREAM_UNAVAILABLE',
        status: options.status ?? 503,
        afterApply: options.afterApply ?? false,
        ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
      };
    },
    close: () => db.close(),
  };
};
