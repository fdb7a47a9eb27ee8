/**
 * Commands and events are readonly data: `type` is the discriminant, the payload sits under
 * `data`. Events are facts (`IncidentAcknowledged`), commands are requests (`AcknowledgeIncident`).
 * Neither is a class, so they serialise to the store and back as they are.
 */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type Event<Type extends string = string, Data extends object = JsonObject> = Readonly<{
  type: Type;
  data: Readonly<Data>;
}>;

/** Who asked, when, and from where: required on every command (no `?? new Date()` fallback). */
export type CommandMetadata = Readonly<{
  /** ISO-8601 time read at the edge (or by the scheduler when a timer is due). */
  now: string;
  /** Deterministic id (UUIDv5 of the Slack trigger/action or webhook delivery id). */
  commandId: string;
  /** Who asked: a Slack user id, `pagerduty:<user id>`, `system:scheduler`, … */
  actor: string;
  /** Slack context when the command came from Slack. */
  teamId?: string;
  channelId?: string;
  responseUrl?: string;
  /** The inbox event that carried this command, for the timeline. */
  causationId?: string;
}>;

export type Command<Type extends string = string, Data extends object = JsonObject> = Readonly<{
  type: Type;
  data: Readonly<Data>;
  metadata: CommandMetadata;
}>;

/** Closes a `switch` over a union: a new member without a case fails to type-check. */
export const exhaustive = (value: never, what = 'value'): never => {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
};
