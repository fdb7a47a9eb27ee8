import type { App } from '@slack/bolt';
import { registerVerificationActions } from './actions.ts';
import { registerVerifyCommand } from './commands.ts';
import type { VerificationListenerDeps } from './deps.ts';
import { registerVerificationViews } from './views.ts';

export type { VerificationListenerDeps } from './deps.ts';

/**
 * Every Slack listener of the verification lifecycle: `/verify`, the code DM's buttons and the code
 * modal. The verification module (handlers/verification/module.ts) calls it when verification is on.
 */
export const register = (app: App, deps: VerificationListenerDeps): void => {
  registerVerifyCommand(app, deps);
  registerVerificationActions(app, deps);
  registerVerificationViews(app, deps);
};
