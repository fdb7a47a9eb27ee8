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
  options?: HandleCommandOptions;
}>;

export type CommandBus = Readonly<{
  /** Decides and appends one command on its stream; throws coded errors (SB_ILLEGAL_STATE, …). */
  dispatch(command: Command): Promise<HandleCommandResult<unknown> & { streamId: string }>;
  /** True when some lifecycle registered this command type. */
  handles(type: string): boolean;
}>;

/**
 * The command-type → (decider, stream) registry. Lifecycles contribute their routes at the
 * composition root; the inbox processor dispatches recorded commands through it.
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
    const route = routes[command.type];
    if (!route) throw new ValidationError(`no lifecycle handles command ${command.type}`);
    const streamId = route.streamId(command);
    const result = await handleCommand(store, route.decider, streamId, command, route.options);
    return { ...result, streamId };
  },
  handles: (type) => Object.hasOwn(routes, type),
});
