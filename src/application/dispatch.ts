import type { z } from 'zod';
import { issuesOf } from '../../machines/shared/eventSchemas.ts';
import type { Decider } from '../../machines/shared/machineDecider.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command, Event } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { type HandleCommandOptions, type HandleCommandResult, handleCommand } from './handleCommand.ts';

/** Where a command type goes: which decider decides it, on which stream. */
export type CommandRoute<C extends Command = Command> = Readonly<{
  // biome-ignore lint/suspicious/noExplicitAny: a registry holds deciders of many state types
  decider: Decider<any, C, Event>;
  streamId: (command: C) => string;
  /**
   * The zod schema of the command's `data`. Defaults to the decider's own declaration
   * (`decider.commandSchemas[type]`); a route without either passes the data unchecked.
   */
  schema?: z.ZodType;
  options?: HandleCommandOptions;
}>;

export type CommandBus = Readonly<{
  /** Decides and appends one command on its stream; throws coded errors (SB_ILLEGAL_STATE, …). */
  dispatch(command: Command): Promise<HandleCommandResult<unknown> & { streamId: string }>;
  /** True when some lifecycle registered this command type. */
  handles(type: string): boolean;
}>;

/**
 * Checks a command's data against its route's schema. A command that does not match is refused
 * with SB_VALIDATION naming the first field that is wrong (all of them in `details.issues`) and
 * never reaches the decider. On success the command goes on as it came: the schema checks what the
 * decider reads, and routing fields beside it (`data.streamId`) stay for the route.
 */
export const checkCommand = (command: Command, schema: z.ZodType | undefined): void => {
  if (!schema) return;
  const parsed = schema.safeParse(command.data);
  if (parsed.success) return;
  const issues = issuesOf(parsed.error, 'data');
  const first = issues[0] ?? { path: 'data', message: 'is malformed' };
  throw new ValidationError(`${command.type} is malformed: ${first.path}: ${first.message}`, {
    details: { reason: 'invalid_command', command: command.type, field: first.path, issues },
  });
};

/**
 * The command-type → (decider, stream) registry. Lifecycles contribute their routes at the
 * composition root; the inbox processor, the scheduler and the reactors dispatch through it. Every
 * command's data is checked against its schema first (checkCommand).
 *
 * @example
 * const bus = createCommandBus(store, { ...incidentRoutes, ...timeOffRoutes });
 * await bus.dispatch(command);
 */
export const createCommandBus = (
  store: EventStore,
  routes: Readonly<Record<string, CommandRoute>>,
): CommandBus => ({
  async dispatch(command) {
    const route = Object.hasOwn(routes, command.type) ? routes[command.type] : undefined;
    if (!route) throw new ValidationError(`no lifecycle handles command ${command.type}`);
    checkCommand(command, route.schema ?? route.decider.commandSchemas?.[command.type]);
    const streamId = route.streamId(command);
    const result = await handleCommand(store, route.decider, streamId, command, route.options);
    return { ...result, streamId };
  },
  handles: (type) => Object.hasOwn(routes, type),
});
