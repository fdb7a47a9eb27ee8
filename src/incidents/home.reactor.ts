import { isChatOpsError } from '../core/errors.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { Processor } from '../processors/runner.ts';
import { type KnownBlock, mrkdwn, plain, type SlackMessage } from '../slack/blocks/format.ts';
import { incidentList } from './blocks/incidentList.ts';
import type { IncidentView } from './blocks/incidentView.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { withSlackUsers } from './cards.reactor.ts';
import { readIncidentState } from './incidentState.ts';
import type { IncidentReadModels } from './readModels.projection.ts';

/**
 * `incident-home`: the App Home tab (design.md "Slack surface"). When someone opens it
 * (`app_home_opened`, recorded in the inbox like every input), it publishes their open incidents
 * (assigned to them in the incident service, or triggered by them) and the team's, newest first,
 * or says plainly why Switchboard cannot act for them yet (no incident-service user).
 *
 * Only the incident lifecycle contributes so far; the other lifecycles' sections (pending
 * approvals, verification status, time off) belong in the same view when they land.
 *
 * @example
 * const home = createIncidentHomeReactor({ slack: { publishHome }, readModels, identity });
 */
export type HomeSlackPort = Readonly<{
  publishHome(userId: string, view: Readonly<{ type: 'home'; blocks: KnownBlock[] }>): Promise<void>;
}>;

export const INCIDENT_HOME_PROCESSOR = 'incident-home';
const MAX_ROWS = 20;

/** List rows without their Show buttons (a Home tab has no response_url to answer a click with). */
const rows = (message: SlackMessage): KnownBlock[] =>
  message.blocks
    .filter((b) => b.type === 'section')
    .map((b) => {
      const { accessory: _accessory, ...rest } = b as KnownBlock & { accessory?: unknown };
      return rest as KnownBlock;
    });

export const createIncidentHomeReactor = (
  options: Readonly<{ slack: HomeSlackPort; readModels: IncidentReadModels; identity: IdentityResolver }>,
): Processor => ({
  id: INCIDENT_HOME_PROCESSOR,
  filter: { streamPrefixes: ['inbox-slack'], eventTypes: ['SlackInputReceived'] },
  async handle(event, ctx) {
    const input = (
      event.data as { input?: { inputKind?: string; name?: string; actor?: string; payload?: unknown } }
    ).input;
    const tab = ((input?.payload as { event?: { tab?: unknown } } | undefined)?.event?.tab ??
      'home') as string;
    if (input?.inputKind !== 'event' || input.name !== 'app_home_opened' || tab !== 'home' || !input.actor)
      return;
    const user = input.actor;
    // Opened long ago (a replay after a restart): the next opening publishes a fresh one.
    if (ctx.now().getTime() - event.recordedAt.getTime() > 10 * 60_000) return;

    let upstreamUserId: string | null = null;
    let problem: string | null = null;
    try {
      upstreamUserId = (await options.identity.resolve(user)).id;
    } catch (error) {
      if (!isChatOpsError(error) || error.code !== 'SB_UNMAPPED_USER') throw error;
      problem = error.message;
    }
    await options.readModels.catchUp();
    const views: IncidentView[] = [];
    for (const row of options.readModels.openIncidents()) {
      const { state } = await readIncidentState(ctx.store, row.streamId);
      views.push(withSlackUsers(toIncidentView(row.streamId, state), options.readModels.slackUserOf));
    }
    const mine = views.filter(
      (v) =>
        v.assignees.some((a) => a.id === upstreamUserId || a.slackUserId === user) ||
        v.requested?.by === user,
    );
    const now = ctx.now().toISOString();
    const blocks: KnownBlock[] = [{ type: 'header', text: plain('Incidents') }];
    if (problem) blocks.push({ type: 'section', text: mrkdwn(`:bust_in_silhouette: ${problem}`) });
    blocks.push({ type: 'section', text: mrkdwn(`*Yours* (${mine.length})`) });
    blocks.push(
      ...(mine.length
        ? rows(incidentList(mine.slice(0, MAX_ROWS), { reference: now }))
        : [{ type: 'context', elements: [mrkdwn('Nothing assigned to you is open.')] } as KnownBlock]),
    );
    blocks.push({ type: 'divider' });
    blocks.push({ type: 'section', text: mrkdwn(`*All open* (${views.length})`) });
    blocks.push(
      ...(views.length
        ? rows(incidentList(views.slice(0, MAX_ROWS), { reference: now }))
        : [{ type: 'context', elements: [mrkdwn(':sunny: Nothing open. Quiet night.')] } as KnownBlock]),
    );
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          '`/incident trigger <service> <title>` opens one · `/incident list` · `/oncall` · `/incident help`',
        ),
      ],
    });
    await options.slack.publishHome(user, { type: 'home', blocks });
  },
});
