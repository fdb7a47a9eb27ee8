import type { App } from '@slack/bolt';
import { registerIncidentActions } from './actions.ts';
import { type IncidentListenerDeps, registerIncidentCommand, registerOnCallCommand } from './commands.ts';
import { registerStatusUpdateListeners } from './statusUpdates.ts';
import { registerIncidentViews } from './views.ts';
import { registerIncidentWorkActions } from './working.ts';

export type { IncidentListenerDeps } from './commands.ts';

/**
 * Every Slack listener of the incident lifecycle: `/incident`, `/oncall`, the card buttons and the
 * incident modals. The incident module (handlers/incident/module.ts) calls it when incidents are on.
 */
export const register = (app: App, deps: IncidentListenerDeps): void => {
  registerIncidentCommand(app, deps);
  registerOnCallCommand(app, deps);
  registerIncidentActions(app, deps);
  registerIncidentViews(app, deps);
  registerIncidentWorkActions(app, deps);
  registerStatusUpdateListeners(app, deps);
};
