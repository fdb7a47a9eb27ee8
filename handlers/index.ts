import type { App } from '@slack/bolt';
import type { Inbox } from '../src/application/inbox.ts';
import type { Config } from '../src/config.ts';
import type { Clock } from '../src/core/clock.ts';
import type { IncidentHandlerDeps } from '../src/incidents/queries.ts';
import type { Logger } from '../src/logger.ts';
import { registerAppHome } from './events/appHome.ts';
import { register as registerIncidentListeners } from './incident/index.ts';
import { pagerDutyWebhookVerifier } from './incident/webhooks.ts';
import { recordSlackInputs } from './middleware/recordSlackInput.ts';
import type { WebhookVerifier } from './webhooks/routes.ts';

/**
 * The Slack and webhook edge (style.md rule 4: handlers translate, nothing more). Listeners parse
 * an input into commands, record it with `deps.inbox.accept({ input, commands })`, and `ack()`.
 * They never touch deciders, the store or the Web API: a processor dispatches what the inbox
 * recorded, and reply processors answer.
 *
 * Adding a lifecycle's listeners: write `handlers/<kind>/<lifecycle>.ts` exporting
 * `register(app, deps)`, and call it below when `deps.config.lifecycles.<lifecycle>` is on.
 */
export type HandlerDeps = Readonly<{
  inbox: Inbox;
  clock: Clock;
  logger: Logger;
  /** Read-only: lifecycle switches (`config.lifecycles`) and vendor secrets for verifiers. */
  config: Config;
  /** Queries and `views.open` for the incident listeners; present when incidents are switched on. */
  incidents?: IncidentHandlerDeps;
}>;

/** action_ids whose values are secrets (e.g. a typed one-time code): stored as `[Redacted]`. */
export const SENSITIVE_ACTION_IDS: ReadonlySet<string> = new Set<string>([]);

export const registerSlackHandlers = (app: App, deps: HandlerDeps): void => {
  // First: every input is recorded (or, if no listener accepts it, recorded by the catch-all).
  app.use(
    recordSlackInputs({
      inbox: deps.inbox,
      clock: deps.clock,
      logger: deps.logger,
      lifecycles: deps.config.lifecycles,
      sensitiveActionIds: SENSITIVE_ACTION_IDS,
    }),
  );
  // Lifecycle listeners register here. A switched-off lifecycle registers nothing: the recording
  // middleware answers its commands with one line saying it is not configured.
  const incidents = deps.config.lifecycles.incidents ? deps.incidents : undefined;
  if (incidents) {
    const incidentDeps = { ...deps, incidents };
    registerIncidentListeners(app, incidentDeps);
    registerAppHome(app, deps);
  }
};

/** Webhook verifiers of the switched-on lifecycles (each brings its own). */
export const webhookVerifiers = (
  deps: HandlerDeps,
  extra: Readonly<{ slackUserOf?: (upstreamUserId: string) => string | null }> = {},
): WebhookVerifier[] => [
  ...(deps.config.pagerduty && deps.config.lifecycles.incidents
    ? [
        pagerDutyWebhookVerifier({
          secrets: deps.config.pagerduty.webhookSecret,
          logger: deps.logger,
          ...(extra.slackUserOf ? { slackUserOf: extra.slackUserOf } : {}),
        }),
      ]
    : []),
];
