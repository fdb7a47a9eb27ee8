import type { z } from 'zod';
import type { Event } from './messages.ts';

/** An event as the store hands it back: a type and JSON data of a shape not yet checked. */
export type StoredEvent = Readonly<{ type: string; data: unknown }>;

/**
 * Reads an event stored in an older shape as the current one: it gets the event as stored under
 * its type and returns it in today's shape, possibly under a new type name (a rename). Stored
 * events are never rewritten; they are read through their upcasters on every fold.
 *
 * Upcasters are keyed by the type they read. One that keeps the type runs once; one that renames
 * is followed by the upcaster of the new name, if any. So an upcaster of a type that still exists
 * must recognise the old shape it upgrades and return a current one unchanged.
 *
 * @example
 * // TicketOpened was first stored as TicketCreated, with `name` where it now has `title`.
 * const upcasters = {
 *   TicketCreated: ({ data }) => {
 *     const d = data as { ticketId: string; name: string; by: string };
 *     return { type: 'TicketOpened', data: { ticketId: d.ticketId, title: d.name, by: d.by } };
 *   },
 * };
 */
export type Upcaster = (event: StoredEvent) => StoredEvent;

/** The zod schema of each event type's `data`: the shape every stored event is checked against. */
export type EventDataSchemas<E extends Event> = { readonly [T in E['type']]: z.ZodType<EventData<E, T>> };

type EventData<E extends Event, T extends E['type']> = Extract<E, { type: T }>['data'];

/** What a lifecycle declares about its stored events: their schemas, and upcasters for old shapes. */
export type EventDeclarations<E extends Event> = Readonly<{
  schemas: EventDataSchemas<E>;
  /** By stored type name. Only types whose shape (or name) changed since they were first stored. */
  upcasters?: Readonly<Record<string, Upcaster>>;
}>;

/** One problem zod found, with the path into the event (`data.by.slackUserId`). */
export type EventIssue = Readonly<{ path: string; message: string }>;

/**
 * A stored event that is not one of the lifecycle's events, or does not match its schema after the
 * upcasters ran. Carries the same `code` as src/core/errors.ts (machines/ may not import src/);
 * whoever folds the stream adds where the event is (stream, position).
 */
export class MalformedEvent extends Error {
  readonly code = 'SB_STORE_CORRUPT';
  readonly eventType: string;
  readonly issues: readonly EventIssue[];
  constructor(eventType: string, message: string, issues: readonly EventIssue[] = []) {
    super(message);
    this.name = 'MalformedEvent';
    this.eventType = eventType;
    this.issues = issues;
  }
}

/** `['data', 'by', 0]` → `data.by[0]`. */
export const issuePath = (prefix: string, path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    prefix,
  );

/** zod's issues as `{ path, message }`, paths rooted at `prefix`. */
export const issuesOf = (error: z.ZodError, prefix: string): EventIssue[] =>
  error.issues.map((i) => ({ path: issuePath(prefix, i.path), message: i.message }));

/** Upcasters run one after another; a chain longer than this is a cycle. */
const MAX_UPCASTS = 8;

/**
 * The stored event in today's shape: every upcaster of its type, in turn, until the type stops
 * changing (see Upcaster).
 */
export const upcast = (
  event: StoredEvent,
  upcasters: Readonly<Record<string, Upcaster>> | undefined,
): StoredEvent => {
  let current = event;
  for (let step = 0; step < MAX_UPCASTS; step++) {
    const upcaster =
      upcasters && Object.hasOwn(upcasters, current.type) ? upcasters[current.type] : undefined;
    if (!upcaster) return current;
    const next = upcaster(current);
    if (next.type === current.type) return next;
    current = next;
  }
  throw new MalformedEvent(event.type, `the upcasters of ${event.type} do not end (a cycle?)`);
};

/**
 * Builds the function that turns a stored event into a typed one: upcast, then parse its data with
 * the schema of its (current) type. Throws MalformedEvent naming the type and the failing fields.
 * zod drops fields a schema does not name, so a folded event is exactly the declared shape.
 *
 * @example
 * const parse = eventParser('ticket', { schemas: { TicketOpened: z.object({ title: z.string() }) } });
 * parse({ type: 'TicketOpened', data: { title: 'x' } }); // { type: 'TicketOpened', data: { title: 'x' } }
 * parse({ type: 'TicketOpened', data: {} }); // throws MalformedEvent: data.title …
 */
export const eventParser = <E extends Event>(
  lifecycle: string,
  declared: EventDeclarations<E>,
): ((stored: StoredEvent) => E) => {
  const schemas = declared.schemas as Readonly<Record<string, z.ZodType>>;
  return (stored) => {
    const current = upcast(stored, declared.upcasters);
    const schema = Object.hasOwn(schemas, current.type) ? schemas[current.type] : undefined;
    if (!schema) {
      throw new MalformedEvent(
        current.type,
        `${current.type} is not an event of ${lifecycle}` +
          (current.type === stored.type ? '' : ` (upcast from ${stored.type})`),
      );
    }
    const parsed = schema.safeParse(current.data);
    if (!parsed.success) {
      const issues = issuesOf(parsed.error, 'data');
      throw new MalformedEvent(
        current.type,
        `${current.type} does not match its schema: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        issues,
      );
    }
    return { type: current.type, data: parsed.data } as E;
  };
};
