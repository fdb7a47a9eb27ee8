import { describe, expect, it } from 'vitest';
import { readSlackAppSettings } from '../../sandbox/manifest.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { commandEscapes, encodeTyped } from '../../sandbox/simulators/slack/typed.ts';

// What a person typed, as Slack sends it to the app (api.slack.com/docs/formatting; slash
// commands' should_escape): the fake Slack and every helper that builds a command go through this.

const users = [
  { id: 'U0ANA', name: 'ana' },
  { id: 'U0BEN', name: 'ben.k' },
];
const channels = [{ id: 'C0OPS', name: 'ops-alerts' }];

describe('typed text as Slack sends it', () => {
  it('always encodes &, < and > as entities, and only those', () => {
    expect(encodeTyped('checkout & <payments> "down" 🔥 \'ok\'', { escape: false })).toBe(
      'checkout &amp; &lt;payments&gt; "down" 🔥 \'ok\'',
    );
    expect(encodeTyped('a &amp; b', { escape: true })).toBe('a &amp;amp; b');
  });

  it('with should_escape, turns known people, channels and links into Slack mentions', () => {
    expect(
      encodeTyped(
        'reassign 4 @ana, cc @ben.k. in #ops-alerts see https://x.io/a?b=1&c=2. @nobody #nope a@ana',
        {
          escape: true,
          users,
          channels,
        },
      ),
    ).toBe(
      'reassign 4 <@U0ANA|ana>, cc <@U0BEN|ben.k>. in <#C0OPS|ops-alerts> see <https://x.io/a?b=1&amp;c=2>. @nobody #nope a@ana',
    );
  });

  it('without should_escape, leaves names and links as typed', () => {
    expect(encodeTyped('@ana #ops-alerts https://x.io <b>', { escape: false, users, channels })).toBe(
      '@ana #ops-alerts https://x.io &lt;b&gt;',
    );
  });

  it("encodes a person's message as Slack stores it (mentions by id, special mentions)", () => {
    expect(
      encodeTyped('@here @ana look at #ops-alerts & https://x.io', { kind: 'message', users, channels }),
    ).toBe('<!here> <@U0ANA> look at <#C0OPS|ops-alerts> &amp; <https://x.io>');
  });

  it("follows each command's should_escape in manifest.yml", () => {
    const declared = readSlackAppSettings().escapedCommands;
    for (const command of ['/incident', '/oncall', '/verify', '/timeoff', '/whosout']) {
      expect(commandEscapes(command)).toBe(declared.has(command));
    }
    expect(commandEscapes('/incident')).toBe(true);
    expect(commandEscapes('/verify')).toBe(false);
  });

  it('slashCommandBody sends the typed text encoded, per the command', () => {
    const sent = (command: string, text: string) =>
      new URLSearchParams(slashCommandBody({ command, text }, { directory: { users, channels } })).get(
        'text',
      );
    expect(sent('/incident', 'trigger db Checkout & <Payments> @ana')).toBe(
      'trigger db Checkout &amp; &lt;Payments&gt; <@U0ANA|ana>',
    );
    expect(sent('/timeoff', 'vacation 2026-01-05 note: me & @ana')).toBe(
      'vacation 2026-01-05 note: me &amp; @ana',
    );
    expect(
      new URLSearchParams(slashCommandBody({ text: '<@U0ANA|ana>' }, { encoded: true })).get('text'),
    ).toBe('<@U0ANA|ana>');
  });
});
