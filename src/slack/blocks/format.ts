import type { types } from '@slack/bolt';

// Small text helpers shared by the Block Kit builders. Pure. Times: src/slack/time.ts (Slack date
// tokens, each reader's zone).

export type KnownBlock = types.KnownBlock;
export type ModalView = types.ModalView;

/** A message body: `text` is the notification / accessibility fallback Slack requires beside blocks. */
export type SlackMessage = Readonly<{ text: string; blocks: KnownBlock[] }>;

/** Slack's hard limits we build under. */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  contextElements: 10,
  headerText: 150,
  buttonText: 75,
  actionValue: 2000,
  staticSelectOptions: 100,
  optionText: 75,
  privateMetadata: 3000,
  modalTitle: 24,
} as const;

// Escaping and cutting text live in src/slack/text.ts (one module for Slack's text both ways);
// re-exported here for the Block Kit builders that import them beside `mrkdwn` and `plain`.
import { escapeMrkdwn } from '../text.ts';

export { escapeMrkdwn, truncate } from '../text.ts';

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/** A Slack user id as a mention; anything else escaped as plain text. */
export const mention = (slackUserId: string): string =>
  SLACK_USER.test(slackUserId) ? `<@${slackUserId}>` : escapeMrkdwn(slackUserId);

export const plain = (text: string): { type: 'plain_text'; text: string; emoji: true } => ({
  type: 'plain_text',
  text,
  emoji: true,
});

export const mrkdwn = (text: string): { type: 'mrkdwn'; text: string } => ({ type: 'mrkdwn', text });
