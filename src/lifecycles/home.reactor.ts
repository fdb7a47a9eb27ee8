import { SLACK_INBOX_STREAM, SLACK_INPUT_RECEIVED } from '../application/inbox.ts';
import type { Processor } from '../processors/runner.ts';
import type { KnownBlock } from '../slack/blocks/format.ts';
import type { HomeSection } from './lifecycle.ts';

/**
 * `app-home`: the App Home tab, composed from every switched-on lifecycle's section. When someone
 * opens the tab (`app_home_opened`, recorded in the inbox like every input), it renders each
 * section for them, in the order the lifecycles are listed, a divider between two sections, and
 * publishes the view (`views.publish`). A section that throws fails the whole tab, so the runner
 * retries it, rather than publishing a tab with a part silently missing.
 *
 * An opening recorded more than 10 minutes ago (a replay after a restart) publishes nothing: the
 * user's next opening publishes a fresh tab.
 *
 * @example
 * const home = createAppHomeReactor({ sections: [incidentHome], slack: { publishHome } });
 */
export type HomeSlackPort = Readonly<{
  publishHome(userId: string, view: Readonly<{ type: 'home'; blocks: KnownBlock[] }>): Promise<void>;
}>;

export const APP_HOME_PROCESSOR = 'app-home';
/** Slack's limit on blocks in a Home view. */
const MAX_HOME_BLOCKS = 100;
const STALE_MS = 10 * 60_000;

export const createAppHomeReactor = (
  options: Readonly<{ sections: readonly HomeSection[]; slack: HomeSlackPort }>,
): Processor => ({
  id: APP_HOME_PROCESSOR,
  filter: { streamPrefixes: [SLACK_INBOX_STREAM], eventTypes: [SLACK_INPUT_RECEIVED] },
  async handle(event, ctx) {
    const input = (
      event.data as { input?: { inputKind?: string; name?: string; actor?: string; payload?: unknown } }
    ).input;
    const tab = ((input?.payload as { event?: { tab?: unknown } } | undefined)?.event?.tab ??
      'home') as string;
    if (input?.inputKind !== 'event' || input.name !== 'app_home_opened' || tab !== 'home' || !input.actor)
      return;
    if (ctx.now().getTime() - event.recordedAt.getTime() > STALE_MS) return;
    const user = input.actor;
    const blocks: KnownBlock[] = [];
    for (const section of options.sections) {
      const part = await section.render(user, ctx);
      if (part.length === 0) continue;
      if (blocks.length > 0) blocks.push({ type: 'divider' });
      blocks.push(...part);
    }
    await options.slack.publishHome(user, { type: 'home', blocks: blocks.slice(0, MAX_HOME_BLOCKS) });
  },
});
