import type { App } from '@slack/bolt';
import { registerTimeOffActions } from './actions.ts';
import { registerTimeOffCoverActions } from './buttonsCover.ts';
import { registerTimeOffCommands } from './commands.ts';
import type { TimeOffListenerDeps } from './deps.ts';
import { registerTimeOffViews } from './views.ts';

export type { TimeOffListenerDeps } from './deps.ts';

/**
 * Every Slack listener of the time-off lifecycle: `/timeoff` (form, text, status, cancel, balance,
 * help), `/whosout`, the buttons of the approver's and the requester's DMs, and the request and
 * deny-with-reason forms. The time-off module (handlers/timeOff/module.ts) calls it when time off is on.
 * HR's policy types are shared by all of them, cached for some minutes.
 */
export const register = (app: App, deps: TimeOffListenerDeps): void => {
  const policies = deps.timeOff.queries.policyTypes;
  registerTimeOffCommands(app, deps, policies);
  registerTimeOffActions(app, deps, policies);
  registerTimeOffCoverActions(app, deps);
  registerTimeOffViews(app, deps, policies);
};
