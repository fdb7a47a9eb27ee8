import type { App } from '@slack/bolt';
import type { TimeOffListenerDeps } from './deps.ts';

export type { TimeOffListenerDeps } from './deps.ts';

// CONTRACT STUB (slice slack): replaced by /timeoff, /whosout, the approval buttons and modals.
export const register = (_app: App, _deps: TimeOffListenerDeps): void => {};
