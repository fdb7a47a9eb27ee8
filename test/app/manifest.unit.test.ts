import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { VERIFY_USAGE } from '../../handlers/verification/commands.ts';
import { SLACK_EVENTS_PATH } from '../../src/http/slackReceiver.ts';
import { ALL_LIFECYCLES, LIFECYCLES, PLANNED_LIFECYCLES } from '../../src/lifecycleList.ts';

type Manifest = {
  features: {
    slash_commands: { command: string; url: string; description: string; usage_hint?: string }[];
    app_home: Record<string, boolean>;
  };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { request_url: string; bot_events: string[] };
    interactivity: { is_enabled: boolean; request_url: string };
    socket_mode_enabled: boolean;
  };
};

const manifest = parse(readFileSync(join(import.meta.dirname, '../../manifest.yml'), 'utf8')) as Manifest;

describe('manifest.yml', () => {
  it('declares exactly the slash commands the handlers know', () => {
    expect(manifest.features.slash_commands.map((c) => c.command).sort()).toEqual(
      ALL_LIFECYCLES.flatMap((l) => l.slashCommands).sort(),
    );
  });

  it('declares every lifecycle module’s commands, each owned by exactly one module (built or planned)', () => {
    const declared = new Set(manifest.features.slash_commands.map((c) => c.command));
    for (const module of [...LIFECYCLES, ...PLANNED_LIFECYCLES]) {
      for (const command of module.slashCommands) {
        expect(declared.has(command), `${module.name} owns ${command}; manifest.yml lacks it`).toBe(true);
      }
    }
    for (const command of declared) {
      const owners = ALL_LIFECYCLES.filter((l) => l.slashCommands.includes(command)).map((l) => l.name);
      expect(owners, `owners of ${command}`).toHaveLength(1);
    }
  });

  it('hints every /verify subcommand the handler knows (remove included, issue 18)', () => {
    const hint = manifest.features.slash_commands.find((c) => c.command === '/verify')?.usage_hint ?? '';
    const words = VERIFY_USAGE.replace('/verify ', '')
      .split('|')
      .map((w) => w.trim())
      .filter((w) => /^[a-z]+$/.test(w));
    expect(words).toContain('remove');
    for (const word of words) expect(hint.split('|').map((w) => w.trim())).toContain(word);
  });

  it('sends commands, interactivity and events to the one Slack endpoint', () => {
    const urls = [
      ...manifest.features.slash_commands.map((c) => c.url),
      manifest.settings.interactivity.request_url,
      manifest.settings.event_subscriptions.request_url,
    ];
    for (const url of urls) expect(new URL(url).pathname).toBe(SLACK_EVENTS_PATH);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
  });

  it('asks for the minimal bot scopes and has App Home on', () => {
    expect(manifest.oauth_config.scopes.bot.sort()).toEqual(
      [
        'channels:history',
        // Issue 12: conversations.members, who may decide time off sent to the HR channel.
        'channels:read',
        'groups:read',
        // Issue 22 item 7: an incident channel on demand (conversations.create, invite, archive).
        'channels:manage',
        'chat:write',
        'commands',
        'groups:history',
        // Issue 21: the outbox finds a DM posted just before a crash in the DM's history.
        'im:history',
        'im:write',
        'users:read',
        'users:read.email',
      ].sort(),
    );
    expect(manifest.features.app_home['home_tab_enabled']).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toContain('app_home_opened');
    expect(manifest.settings.socket_mode_enabled).toBe(false);
  });
});
