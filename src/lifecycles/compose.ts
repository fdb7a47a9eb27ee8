import type { CommandRoute } from '../application/dispatch.ts';
import { ChatOpsError } from '../core/errors.ts';
import type { CommandRejectedData } from '../processors/inboxDispatch.reactor.ts';
import type { SlackReplyMessage } from '../processors/ports.ts';
import type { ParkedNoticeOwner } from '../slack/parkedNotices.reactor.ts';
import type { LifecycleDeclaration } from './config.ts';
import type { Enrich, LifecycleInstance, LifecycleModule } from './lifecycle.ts';

/**
 * How the composition root joins the switched-on lifecycles into one app: who owns each slash
 * command and each command type (each exactly once, or Switchboard refuses to start), and the
 * enrich step and refusal texts routed to the lifecycle that owns the command.
 *
 * @example
 * const { routes, ownerOf } = claimCommandRoutes({ shared: commandReplyRoutes }, running);
 * const bus = createCommandBus(store, routes);
 */

/**
 * Who owns a slash command, as the edge needs to know when nothing handled it. The composition
 * root builds the map from every lifecycle's declared `slashCommands` (`slashCommandOwners`).
 */
export type CommandOwner = Readonly<{
  /** The lifecycle's name (`incidents`). */
  lifecycle: string;
  /** What users read (`Incidents`). */
  title: string;
  titleIsPlural: boolean;
  /** Its credentials are configured. */
  on: boolean;
}>;

/** A switched-on module and what its `create` returned. */
export type RunningLifecycle = Readonly<{ module: LifecycleModule; instance: LifecycleInstance }>;

const refuse = (message: string, details: Record<string, unknown>): ChatOpsError =>
  new ChatOpsError('SB_CONFIG', message, { details });

/**
 * Slash command → the lifecycle that owns it (built or planned) and whether that lifecycle is on.
 * A command two lifecycles claim is refused.
 */
export const slashCommandOwners = (
  declared: readonly LifecycleDeclaration[],
  switches: Readonly<Record<string, boolean>>,
): ReadonlyMap<string, CommandOwner> => {
  const owners = new Map<string, CommandOwner>();
  for (const l of declared) {
    for (const command of l.slashCommands) {
      const previous = owners.get(command);
      if (previous) {
        throw refuse(
          `slash command ${command} is claimed by two lifecycles: ${previous.lifecycle} and ${l.name}`,
          {
            command,
            lifecycles: [previous.lifecycle, l.name],
          },
        );
      }
      owners.set(command, {
        lifecycle: l.name,
        title: l.title,
        titleIsPlural: l.titleIsPlural === true,
        on: switches[l.name] === true,
      });
    }
  }
  return owners;
};

/**
 * The bus's routes: the shared ones (Switchboard's own, e.g. command replies) and every running
 * lifecycle's. A command type claimed twice is refused, naming both claimants.
 */
export const claimCommandRoutes = (
  shared: Readonly<{ name: string; routes: Readonly<Record<string, CommandRoute>> }>,
  running: readonly RunningLifecycle[],
): Readonly<{
  routes: Readonly<Record<string, CommandRoute>>;
  ownerOf: ReadonlyMap<string, RunningLifecycle>;
}> => {
  const routes: Record<string, CommandRoute> = { ...shared.routes };
  const claimant = new Map<string, string>(Object.keys(shared.routes).map((type) => [type, shared.name]));
  const ownerOf = new Map<string, RunningLifecycle>();
  for (const r of running) {
    for (const [type, route] of Object.entries(r.instance.routes ?? {})) {
      const previous = claimant.get(type);
      if (previous !== undefined) {
        throw refuse(`command type ${type} is claimed by two lifecycles: ${previous} and ${r.module.name}`, {
          commandType: type,
          lifecycles: [previous, r.module.name],
        });
      }
      claimant.set(type, r.module.name);
      ownerOf.set(type, r);
      routes[type] = route;
    }
  }
  return { routes, ownerOf };
};

/**
 * Every read model a running lifecycle keeps that resumes from snapshots (a processor with
 * `resumeFrom: 'snapshot'`) is registered by its module (`readModels`, what
 * `npm run events -- rebuild` reads), and no name is registered twice (`reserved`: the kernel's).
 * Anything else is refused at start, naming the read model.
 */
export const checkReadModels = (running: readonly RunningLifecycle[], reserved: readonly string[]): void => {
  const registeredBy = new Map<string, string>(reserved.map((name) => [name, 'Switchboard']));
  for (const r of running) {
    for (const { name } of r.module.readModels ?? []) {
      const previous = registeredBy.get(name);
      if (previous !== undefined) {
        throw refuse(`read model ${name} is registered twice: by ${previous} and ${r.module.name}`, {
          readModel: name,
          lifecycles: [previous, r.module.name],
        });
      }
      registeredBy.set(name, r.module.name);
    }
    for (const p of r.instance.processors ?? []) {
      if (p.resumeFrom === 'snapshot' && registeredBy.get(p.id) !== r.module.name) {
        throw refuse(
          `read model ${p.id} of ${r.module.name} resumes from snapshots but is not in its module's readModels`,
          { readModel: p.id, lifecycle: r.module.name },
        );
      }
    }
  }
};

/** The inbox dispatcher's enrich step: each command goes to its owner's `enrich`, if it has one. */
export const enrichByOwner = (ownerOf: ReadonlyMap<string, RunningLifecycle>): Enrich | undefined => {
  if (![...ownerOf.values()].some((r) => r.instance.enrich)) return undefined;
  return async (command, ctx) => {
    const enrich = ownerOf.get(command.type)?.instance.enrich;
    return enrich ? enrich(command, ctx) : command;
  };
};

/** A refusal's text: the owning lifecycle's wording when it has one, else `fallback`. */
export const rejectionTextByOwner =
  (
    ownerOf: ReadonlyMap<string, RunningLifecycle>,
    fallback: (rejection: CommandRejectedData) => SlackReplyMessage,
  ) =>
  (rejection: CommandRejectedData): SlackReplyMessage =>
    ownerOf.get(rejection.commandType)?.instance.rejectionText?.(rejection) ?? fallback(rejection);

/**
 * Who is told when an event of a stream is parked: the running lifecycle whose `parkedNotices`
 * names the longest prefix of the stream. A prefix two lifecycles claim is refused at start.
 */
export const parkedNoticeOwners = (
  running: readonly RunningLifecycle[],
): ((streamId: string) => ParkedNoticeOwner | undefined) => {
  const byPrefix = new Map<string, ParkedNoticeOwner>();
  for (const r of running) {
    const notices = r.instance.parkedNotices;
    if (!notices) continue;
    for (const prefix of notices.streamPrefixes) {
      const previous = byPrefix.get(prefix);
      if (previous) {
        throw refuse(
          `stream prefix ${prefix} is claimed for parked notices by two lifecycles: ${previous.lifecycle} and ${r.module.name}`,
          { streamPrefix: prefix, lifecycles: [previous.lifecycle, r.module.name] },
        );
      }
      byPrefix.set(prefix, { lifecycle: r.module.name, notices });
    }
  }
  const prefixes = [...byPrefix.keys()].sort((a, b) => b.length - a.length);
  return (streamId) => {
    const prefix = prefixes.find((p) => streamId.startsWith(p));
    return prefix === undefined ? undefined : byPrefix.get(prefix);
  };
};
