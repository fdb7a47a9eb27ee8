import type { App } from '@slack/bolt';
import type { CommandOwner } from '../src/lifecycles/compose.ts';
import type { HandlerDeps } from '../src/lifecycles/lifecycle.ts';
import { registerAppHome } from './events/appHome.ts';
import { recordSlackInputs } from './middleware/recordSlackInput.ts';

/**
 * The Slack and webhook edge. Handlers translate, nothing more: a listener parses an input into
 * typed commands, records it with `deps.inbox.accept({ input, commands })`, and `ack()`s. It never
 * touches deciders, the store or the Web API: a processor dispatches what the inbox recorded, and
 * reply processors answer.
 *
 * Shared here: the recording middleware (every input is recorded before its ack, including the
 * ones no listener handles) and the App Home listener. Each lifecycle's listeners live in
 * `handlers/<lifecycle>/index.ts` (`register(app, deps)`); its module (handlers/<lifecycle>/module.ts)
 * hands that to the composition root, which registers it when the lifecycle is on.
 */
export type SharedEdge = Readonly<{
  /** Slash command → owning lifecycle (built or planned) and whether it is on. */
  commandOwners: ReadonlyMap<string, CommandOwner>;
  /** Each lifecycle's main command, suggested when someone types an unknown one. */
  helpCommands: readonly string[];
  /** action_ids whose values are secrets (e.g. a typed one-time code): stored as `[Redacted]`. */
  sensitiveActionIds: ReadonlySet<string>;
  /** Slash commands whose typed text is personal data (a phone number): stored as `[Redacted]`. */
  sensitiveSlashCommands?: ReadonlySet<string>;
  /** Some switched-on lifecycle has an App Home section: `app_home_opened` is handled. */
  appHome: boolean;
}>;

/**
 * Registers the shared edge; call it before any lifecycle's listeners. A switched-off lifecycle
 * registers nothing: the recording middleware answers its commands with one line saying so.
 */
export const registerSlackHandlers = (app: App, deps: HandlerDeps, edge: SharedEdge): void => {
  // First: every input is recorded (or, if no listener accepts it, recorded by the catch-all).
  app.use(
    recordSlackInputs({
      inbox: deps.inbox,
      clock: deps.clock,
      logger: deps.logger,
      commandOwners: edge.commandOwners,
      helpCommands: edge.helpCommands,
      sensitiveActionIds: edge.sensitiveActionIds,
      ...(edge.sensitiveSlashCommands ? { sensitiveSlashCommands: edge.sensitiveSlashCommands } : {}),
    }),
  );
  if (edge.appHome) registerAppHome(app, deps);
};
