import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * What the sandbox's Slack takes from the app's own manifest (manifest.yml), so it behaves as a
 * workspace with that app installed: which commands have their `@user` / `#channel` arguments
 * escaped, whether the Home and Messages tabs exist (and whether people may write in the latter),
 * and which events the app subscribed to.
 */
export type SlackAppSettings = Readonly<{
  /** Commands declared with `should_escape: true`. */
  escapedCommands: ReadonlySet<string>;
  homeTab: boolean;
  messagesTab: boolean;
  /** People cannot write in the app's Messages tab. */
  messagesTabReadOnly: boolean;
  botEvents: ReadonlySet<string>;
}>;

export const MANIFEST_PATH = resolve(import.meta.dirname, '../manifest.yml');

type Manifest = {
  features?: {
    app_home?: {
      home_tab_enabled?: boolean;
      messages_tab_enabled?: boolean;
      messages_tab_read_only_enabled?: boolean;
    };
    slash_commands?: Array<{ command?: string; should_escape?: boolean }>;
  };
  settings?: { event_subscriptions?: { bot_events?: string[] } };
};

export const readSlackAppSettings = (path = MANIFEST_PATH): SlackAppSettings => {
  const m = parse(readFileSync(path, 'utf8')) as Manifest;
  const home = m.features?.app_home ?? {};
  return {
    escapedCommands: new Set(
      (m.features?.slash_commands ?? [])
        .filter((c) => c.should_escape === true && typeof c.command === 'string')
        .map((c) => String(c.command)),
    ),
    homeTab: home.home_tab_enabled === true,
    messagesTab: home.messages_tab_enabled !== false,
    messagesTabReadOnly: home.messages_tab_read_only_enabled === true,
    botEvents: new Set(m.settings?.event_subscriptions?.bot_events ?? []),
  };
};
