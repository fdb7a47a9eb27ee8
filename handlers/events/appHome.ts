import type { App } from '@slack/bolt';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import { slackInputOf } from '../middleware/slackInput.ts';

/**
 * `app_home_opened`: recorded like every input; the `app-home` processor composes the tab from
 * the switched-on lifecycles' sections and publishes it (an effect, so not here). Slack gets its
 * 2xx once the input is stored.
 */
export const registerAppHome = (app: App, deps: HandlerDeps): void => {
  app.event('app_home_opened', async ({ context }) => {
    await deps.inbox.accept({ input: slackInputOf(context) });
  });
};
