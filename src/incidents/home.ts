import { isChatOpsError } from '../core/errors.ts';
import type { HomeSection } from '../lifecycles/lifecycle.ts';
import type { OnCallShift } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import { type KnownBlock, mrkdwn, plain, type SlackMessage } from '../slack/blocks/format.ts';
import { incidentList } from './blocks/incidentList.ts';
import { type IncidentView, toIncidentView } from './blocks/incidentView.ts';
import { MY_SHIFTS_DAYS, myShiftsBlocks } from './blocks/myShifts.ts';
import { withSlackUsers } from './cards.reactor.ts';
import { readIncidentState } from './incidentState.ts';
import type { IncidentReadModels } from './readModels.projection.ts';

/**
 * The incident lifecycle's section of the App Home tab: the user's open incidents (assigned to
 * them in the incident service, or triggered by them) and the team's, newest first, or plainly
 * why Switchboard cannot act for them yet (no incident-service user). The tab itself is composed
 * and published by the `app-home` processor (src/lifecycles/home.reactor.ts).
 *
 * @example
 * const home = createIncidentHomeSection({ readModels, identity });
 * const blocks = await home.render('U0ANA', ctx);
 */
const MAX_ROWS = 20;

/** List rows without their Show buttons (a Home tab has no response_url to answer a click with). */
const rows = (message: SlackMessage): KnownBlock[] =>
  message.blocks
    .filter((b) => b.type === 'section')
    .map((b) => {
      const { accessory: _accessory, ...rest } = b as KnownBlock & { accessory?: unknown };
      return rest as KnownBlock;
    });

export const createIncidentHomeSection = (
  options: Readonly<{
    readModels: IncidentReadModels;
    identity: IdentityResolver;
    /**
     * Issue 20 item 4, My shifts: the viewer's on-call shifts over a range (the on-call lookups'
     * `shiftsOf`: the final rota, covers included), and their Slack time zone (for the days
     * "Ask for cover" suggests). Absent: no My shifts.
     */
    myShifts?: Readonly<{
      shiftsOf(
        slackUserId: string,
        range: Readonly<{ since: Date; until: Date }>,
      ): Promise<readonly OnCallShift[]>;
      zoneOf(slackUserId: string): Promise<string>;
    }>;
  }>,
): HomeSection => ({
  async render(user, ctx) {
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
    const blocks: KnownBlock[] = [{ type: 'header', text: plain('Incidents') }];
    if (problem) blocks.push({ type: 'section', text: mrkdwn(`:bust_in_silhouette: ${problem}`) });
    blocks.push({ type: 'section', text: mrkdwn(`*Yours* (${mine.length})`) });
    blocks.push(
      ...(mine.length
        ? rows(incidentList(mine.slice(0, MAX_ROWS)))
        : [{ type: 'context', elements: [mrkdwn('Nothing assigned to you is open.')] } as KnownBlock]),
    );
    blocks.push({ type: 'divider' });
    blocks.push({ type: 'section', text: mrkdwn(`*All open* (${views.length})`) });
    blocks.push(
      ...(views.length
        ? rows(incidentList(views.slice(0, MAX_ROWS)))
        : [{ type: 'context', elements: [mrkdwn(':sunny: Nothing open. Quiet night.')] } as KnownBlock]),
    );
    if (options.myShifts && upstreamUserId !== null) {
      const since = ctx.now();
      const until = new Date(since.getTime() + MY_SHIFTS_DAYS * 24 * 3_600_000);
      // A service that does not answer costs this part of the tab, not the whole tab.
      const shifts = await options.myShifts.shiftsOf(user, { since, until }).catch((error: unknown) => {
        ctx.logger.warn({ err: error }, 'App Home: could not read the on-call shifts');
        return null;
      });
      blocks.push({ type: 'divider' });
      blocks.push(...myShiftsBlocks({ shifts, timeZone: await options.myShifts.zoneOf(user) }));
    }
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          '`/incident trigger &lt;service&gt; &lt;title&gt;` opens one · `/incident list` · `/oncall` · `/incident help`',
        ),
      ],
    });
    return blocks;
  },
});
