import type { CommandRejectedData } from '../processors/inboxDispatch.reactor.ts';
import type { SlackReplyMessage } from '../processors/ports.ts';

// CONTRACT STUB (slice slack): how refusals of time-off commands read.
export const timeOffRejectionText = (_r: CommandRejectedData): SlackReplyMessage | undefined => undefined;
