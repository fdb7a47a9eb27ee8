import { describe, expect, it } from 'vitest';
import { incidentDecider } from '../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../machines/incident/events.ts';
import { incidentStreamIdForRequest } from '../../machines/incident/streams.ts';
import {
  actionOf,
  blockIdOf,
  findElement,
  renderBlocks,
  renderMessageBody,
  renderMrkdwn,
  renderView,
  stateValue,
  viewStateValues,
} from '../../sandbox/console/public/blockKit.js';
import { incidentCard } from '../../src/incidents/blocks/incidentCard.ts';
import { incidentHelp } from '../../src/incidents/blocks/incidentHelp.ts';
import { INCIDENT_ACTION, INCIDENT_FIELD } from '../../src/incidents/blocks/incidentIds.ts';
import {
  readTriggerIncidentSubmission,
  triggerIncidentModal,
} from '../../src/incidents/blocks/incidentModals.ts';
import { toIncidentView } from '../../src/incidents/blocks/incidentView.ts';
import { ACKED, OPEN, TRIGGER_ID } from '../machines/incident/fixtures.ts';

const ctx = {
  users: { UANA01: { name: 'ana' }, UBOB02: { name: 'bob' }, U0BOT: { name: 'switchboard', isBot: true } },
  channels: { C0INC: { name: 'incidents' } },
};

const card = (events: readonly IncidentEvent[]) => {
  const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
  return incidentCard(toIncidentView(incidentStreamIdForRequest(TRIGGER_ID), state));
};

/** Visible text of an HTML string: tags dropped, entities decoded, whitespace collapsed. */
const textOfHtml = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

describe('mrkdwn', () => {
  it('bold, italic, strike and inline code', () => {
    expect(renderMrkdwn('*Status* is _odd_ and ~gone~, run `a*b*c`')).toBe(
      '<b>Status</b> is <i>odd</i> and <s>gone</s>, run <code>a*b*c</code>',
    );
  });

  it('links with and without labels; only http(s) and mailto become hrefs', () => {
    expect(renderMrkdwn('<https://pd.example/incidents/P1|#42 db &amp; disk>')).toBe(
      '<a href="https://pd.example/incidents/P1" target="_blank" rel="noopener noreferrer">#42 db &amp; disk</a>',
    );
    expect(renderMrkdwn('<https://x.example/a_b_c>')).toContain('>https://x.example/a_b_c</a>');
    expect(renderMrkdwn('<javascript:alert(1)|click>')).toContain('href="#"');
  });

  it('user and channel mentions show names from the context, or the id when unknown', () => {
    expect(renderMrkdwn('Assigned to <@UANA01> in <#C0INC>', ctx)).toBe(
      'Assigned to <span class="mk-mention" data-user="UANA01">@ana</span> in <span class="mk-channel" data-channel="C0INC">#incidents</span>',
    );
    expect(textOfHtml(renderMrkdwn('<@UNKNOWN9|zed> and <@UOTHER>', ctx))).toBe('@zed and @UOTHER');
    expect(textOfHtml(renderMrkdwn('<!here> look'))).toBe('@here look');
  });

  it('emoji shortcodes the bot uses become emoji; unknown ones and times stay text', () => {
    const html = renderMrkdwn(':red_circle: Triggered at 02:04:31 :not_an_emoji:');
    expect(textOfHtml(html)).toBe('🔴 Triggered at 02:04:31 :not_an_emoji:');
  });

  it('escapes HTML in text, keeps Slack-escaped characters literal, and breaks lines', () => {
    expect(renderMrkdwn('<b>not bold</b>')).not.toContain('<b>not');
    expect(renderMrkdwn('a &lt;script&gt; &amp; b\nnext')).toBe('a &lt;script&gt; &amp; b<br>next');
  });

  it('code blocks are verbatim; quotes are grouped', () => {
    expect(renderMrkdwn('```*x* <@U1>```')).toBe('<pre>*x* &lt;@U1&gt;</pre>');
    expect(renderMrkdwn('>one\n>two\nafter')).toBe('<blockquote>one<br>two</blockquote>after');
  });

  it('formatting around a link applies to the link', () => {
    expect(renderMrkdwn('*<https://a.example|title>*')).toBe(
      '<b><a href="https://a.example" target="_blank" rel="noopener noreferrer">title</a></b>',
    );
  });
});

describe('Block Kit rendering', () => {
  it("renders the bot's incident card: title link, fields, context and its buttons and user select", () => {
    const { blocks } = card(OPEN);
    const html = renderBlocks(blocks, ctx);
    const text = textOfHtml(html);
    expect(text).toContain('#42 db-primary disk 95%');
    expect(text).toContain('Status 🔴 Triggered');
    expect(text).toContain('Assigned @ana');
    expect(html).toContain('<div class="bk-fields">');
    for (const id of [INCIDENT_ACTION.acknowledge, INCIDENT_ACTION.resolve, INCIDENT_ACTION.note]) {
      expect(html).toContain(`data-action-id="${id}"`);
    }
    expect(html).toMatch(/<button type="button" class="bk-button bk-primary"[^>]*>Acknowledge<\/button>/);
    expect(html).toMatch(
      /<select class="bk-select"[^>]*data-type="users_select"[^>]*data-action-id="incident\.reassign"/,
    );
    // The escalate button's confirm dialog travels with it.
    expect(html).toMatch(/data-action-id="incident\.escalate" data-confirm="\{&quot;title&quot;/);
  });

  it('an acknowledged card has no Acknowledge button', () => {
    const html = renderBlocks(card(ACKED).blocks, ctx);
    expect(html).not.toContain(`data-action-id="${INCIDENT_ACTION.acknowledge}"`);
    expect(textOfHtml(html)).toContain('🟡 Acknowledged');
  });

  it('header, divider, context images, image blocks by alt text, overflow and static select', () => {
    const html = renderBlocks([
      { type: 'header', text: { type: 'plain_text', text: 'Incidents :rotating_light:', emoji: true } },
      { type: 'divider' },
      { type: 'context', elements: [{ type: 'image', image_url: 'https://x/a.png', alt_text: 'avatar' }] },
      { type: 'image', image_url: 'https://x/graph.png', alt_text: 'latency graph' },
      {
        type: 'section',
        block_id: 'row',
        text: { type: 'mrkdwn', text: 'row' },
        accessory: {
          type: 'overflow',
          action_id: 'more',
          options: [{ text: { type: 'plain_text', text: 'Show' }, value: 'show-1' }],
        },
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'static_select',
            action_id: 'pick',
            placeholder: { type: 'plain_text', text: 'Pick one' },
            options: [
              { text: { type: 'plain_text', text: 'A' }, value: 'a' },
              { text: { type: 'plain_text', text: 'B' }, value: 'b' },
            ],
            initial_option: { text: { type: 'plain_text', text: 'B' }, value: 'b' },
          },
          { type: 'button', text: { type: 'plain_text', text: 'Delete' }, action_id: 'del', style: 'danger' },
        ],
      },
      { type: 'video' },
    ]);
    expect(html).toContain(
      '<div class="bk bk-header" data-block-index="0" data-block-id="sb-block-0">Incidents 🚨</div>',
    );
    expect(html).toContain('<hr>');
    expect(html).toContain('🖼 avatar');
    expect(html).toContain('🖼 latency graph');
    expect(html).toContain(
      '<select class="bk-overflow" title="More actions" data-element="accessory" data-type="overflow" data-action-id="more">',
    );
    expect(html).toContain('<option value="b" selected>B</option>');
    expect(html).toContain('class="bk-button bk-danger"');
    expect(html).toContain('Unsupported block: video');
  });

  it('a message without blocks shows its text as mrkdwn', () => {
    expect(renderMessageBody({ text: "Switchboard doesn't know `/nope` yet." })).toBe(
      '<div class="bk-text-only">Switchboard doesn&#39;t know <code>/nope</code> yet.</div>',
    );
  });

  it("renders the bot's help and trigger modal; errors show under their input", () => {
    const help = renderMessageBody(incidentHelp());
    expect(textOfHtml(help)).toContain('Incidents in Slack');
    expect(help).toContain(
      '<code>/incident trigger &lt;service&gt; &lt;title&gt;  (no arguments: opens a form)</code>',
    );

    const modal = triggerIncidentModal({
      channel: 'C0INC',
      services: [
        { id: 'PSVC1', name: 'api' },
        { id: 'PSVC2', name: 'db' },
      ],
      initial: { title: 'Database on fire' },
    });
    const view = renderView(modal, ctx, { [INCIDENT_FIELD.triggerTitle.blockId]: 'Say what is broken.' });
    expect(view.title).toBe('Trigger incident');
    expect(view.submit).toBe('Trigger');
    expect(view.close).toBe('Cancel');
    expect(view.body).toContain('<option value="PSVC2">db</option>');
    expect(view.body).toContain('value="Database on fire"');
    expect(view.body).toContain('<textarea class="bk-text" rows="4"');
    expect(view.body).toContain('type="radio"');
    expect(view.body).toContain('(optional)');
    expect(view.body).toMatch(/bk-has-error[^>]*data-block-id="incident\.trigger\.title"/);
    expect(view.body).toContain('<div class="bk-error" role="alert">Say what is broken.</div>');
  });
});

describe('payload values', () => {
  it("view state values have Slack's shapes, and the bot's own reader accepts them", () => {
    const modal = triggerIncidentModal({
      channel: 'C0INC',
      services: [{ id: 'PSVC2', name: 'db' }],
    });
    const values = viewStateValues(modal, {
      [INCIDENT_FIELD.triggerService.blockId]: { service: 'PSVC2' },
      [INCIDENT_FIELD.triggerTitle.blockId]: { title: 'Database on fire' },
    });
    expect(values[INCIDENT_FIELD.triggerService.blockId]).toEqual({
      service: {
        type: 'static_select',
        selected_option: { text: { type: 'plain_text', text: 'db', emoji: true }, value: 'PSVC2' },
      },
    });
    // Untouched inputs keep their initial values; empty text is null, as Slack sends it.
    expect(values[INCIDENT_FIELD.triggerUrgency.blockId]?.['urgency']?.selected_option?.value).toBe('high');
    expect(values[INCIDENT_FIELD.triggerDetails.blockId]).toEqual({
      details: { type: 'plain_text_input', value: null },
    });
    const read = readTriggerIncidentSubmission(
      values as Parameters<typeof readTriggerIncidentSubmission>[0],
      String(modal.private_metadata),
    );
    expect(read).toEqual({
      ok: true,
      value: {
        service: { id: 'PSVC2' },
        title: 'Database on fire',
        urgency: 'high',
        details: null,
        channel: 'C0INC',
      },
    });
  });

  it('user, multi-user, date and checkbox values', () => {
    expect(stateValue({ type: 'users_select' }, 'UANA01')).toEqual({
      type: 'users_select',
      selected_user: 'UANA01',
    });
    expect(stateValue({ type: 'multi_users_select' }, ['UANA01', 'UBOB02'])).toEqual({
      type: 'multi_users_select',
      selected_users: ['UANA01', 'UBOB02'],
    });
    expect(stateValue({ type: 'datepicker' }, '2026-12-24')).toEqual({
      type: 'datepicker',
      selected_date: '2026-12-24',
    });
    expect(stateValue({ type: 'datepicker' }, '')).toEqual({ type: 'datepicker', selected_date: null });
    const boxes = { type: 'checkboxes', options: [{ text: { type: 'plain_text', text: 'X' }, value: 'x' }] };
    expect(stateValue(boxes, ['x', 'missing'])).toEqual({
      type: 'checkboxes',
      selected_options: [{ text: { type: 'plain_text', text: 'X' }, value: 'x' }],
    });
  });

  it("block actions: a button carries its value; a user select its pick; block ids fill in as Slack's do", () => {
    const { blocks } = card(OPEN);
    const actionsIndex = blocks.findIndex((b) => b.type === 'actions');
    const ack = findElement(blocks, actionsIndex, 0);
    expect(ack?.element['action_id']).toBe(INCIDENT_ACTION.acknowledge);
    const action = actionOf(ack!.element, ack!.blockId, undefined, '1700000000.000001');
    expect(action).toMatchObject({
      type: 'button',
      action_id: INCIDENT_ACTION.acknowledge,
      block_id: blocks[actionsIndex]?.block_id,
      value: incidentStreamIdForRequest(TRIGGER_ID),
      action_ts: '1700000000.000001',
    });
    const select = findElement(blocks, actionsIndex, 4);
    expect(actionOf(select!.element, select!.blockId, 'UBOB02', '1.2')).toMatchObject({
      type: 'users_select',
      action_id: INCIDENT_ACTION.reassign,
      selected_user: 'UBOB02',
    });
    expect(blockIdOf({ type: 'section' }, 3)).toBe('sb-block-3');
    expect(findElement(blocks, 0, 'accessory')).toBeUndefined();
  });

  it('overflow picks echo the chosen option', () => {
    const el = {
      type: 'overflow',
      action_id: 'more',
      options: [{ text: { type: 'plain_text', text: 'Show' }, value: 'show-1' }],
    };
    expect(actionOf(el, 'row', 'show-1', '1.1')).toEqual({
      type: 'overflow',
      action_id: 'more',
      block_id: 'row',
      action_ts: '1.1',
      selected_option: { text: { type: 'plain_text', text: 'Show' }, value: 'show-1' },
    });
  });
});
