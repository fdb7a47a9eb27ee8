import { INCIDENT_USER_COMMANDS } from '../../machines/incident/commands.ts';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { asError } from '../../src/core/errors.ts';
import type { CommandMetadata } from '../../src/core/messages.ts';
import type {
  IncidentSlackCommand,
  IncidentSlackCommandOf,
  IncidentSlackCommandType,
} from '../../src/incidents/slackCommands.ts';
import type { Logger } from '../../src/logger.ts';
import type { SlackMessage } from '../../src/slack/blocks/format.ts';

/** An ephemeral answer body (slash command ack, response_url post). */
export type Ephemeral = Readonly<{
  response_type: 'ephemeral';
  text: string;
  blocks?: SlackMessage['blocks'];
}>;

export const ephemeral = (m: SlackMessage | string): Ephemeral =>
  typeof m === 'string' ? { response_type: 'ephemeral', text: m } : { response_type: 'ephemeral', ...m };

/** What a listener says about an incident command: its type and data, less `by` and `asUser`. */
export type IncidentCommandRequest = {
  [T in IncidentSlackCommandType]: Readonly<{
    type: T;
    data: Omit<IncidentSlackCommandOf<T>['data'], 'by' | 'asUser'>;
  }>;
}[IncidentSlackCommandType];

/**
 * The typed command recorded from a Slack input: deterministic id from the input, Slack context on
 * metadata, `by` = the acting Slack user, and `asUser: null` on user commands (the enricher fills it
 * from the people directory; see src/incidents/slackCommands.ts).
 *
 * @example
 * slackCommand(input, { type: 'AcknowledgeIncident', data: { streamId } });
 */
export const slackCommand = (
  input: SlackInput,
  request: IncidentCommandRequest,
  overrides: Partial<CommandMetadata> = {},
): IncidentSlackCommand => {
  const metadata = commandMetadata(input, 0, overrides);
  const pending = INCIDENT_USER_COMMANDS.has(request.type) ? { asUser: null } : {};
  // The spread keeps `request.data`'s fields; only `by` and `asUser` are added.
  return {
    type: request.type,
    data: { ...request.data, by: metadata.actor, ...pending },
    metadata,
  } as IncidentSlackCommand;
};

type AckFn = (body?: Ephemeral) => Promise<void>;
type RespondFn = (body: Ephemeral) => Promise<unknown>;

/**
 * Answers a query within Slack's 3 s: with the answer itself in the ack when it is ready within
 * `budgetMs`, else with "Looking that up…" and the answer through `respond` (response_url) when it
 * comes. Pages after the first go through `respond` too. A failure is answered, never swallowed
 * silently: the user reads what went wrong, the log gets the error.
 */
export const answerQuery = async (
  args: Readonly<{ ack: AckFn; respond: RespondFn; logger: Logger; what: string; budgetMs?: number }>,
  work: () => Promise<SlackMessage | readonly SlackMessage[]>,
): Promise<void> => {
  const failed = (e: unknown): Ephemeral => {
    args.logger.error({ err: asError(e), query: args.what }, 'incident query failed');
    // The code stays in the log: people read what happened, never `SB_…`.
    return ephemeral(
      `:warning: Switchboard couldn't get ${args.what} just now. Please try again in a minute.`,
    );
  };
  const pending = work().then(
    (v) => ({ ok: true as const, pages: (Array.isArray(v) ? v : [v]) as SlackMessage[] }),
    (e: unknown) => ({ ok: false as const, error: e }),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), args.budgetMs ?? 2_000);
  });
  const first = await Promise.race([pending, late]);
  clearTimeout(timer);
  if (first === null) {
    await args.ack(ephemeral(`:hourglass_flowing_sand: Looking up ${args.what}…`));
    const r = await pending;
    if (!r.ok) await args.respond(failed(r.error));
    else for (const page of r.pages) await args.respond(ephemeral(page));
    return;
  }
  if (!first.ok) {
    await args.ack(failed(first.error));
    return;
  }
  const [head, ...rest] = first.pages;
  await args.ack(ephemeral(head ?? 'Nothing to show.'));
  for (const page of rest) await args.respond(ephemeral(page));
};
