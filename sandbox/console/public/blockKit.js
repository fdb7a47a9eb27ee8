// Block Kit and mrkdwn to HTML strings, with no DOM: the console page renders messages, modals and
// App Home with it, the console server builds Slack payloads with it (which element was clicked,
// what a submitted form's `state.values` look like), and unit tests run it in Node.
//
// Not a complete Slack renderer: it draws what Switchboard sends (header, section with fields and
// an accessory, context, divider, actions, image, input) readably, and says so for anything else.
// Types: blockKit.d.ts.

/** The emoji the bot uses, and a few more; unknown shortcodes stay as text. */
export const EMOJI = {
  white_circle: '⚪',
  red_circle: '🔴',
  large_yellow_circle: '🟡',
  large_green_circle: '🟢',
  large_blue_circle: '🔵',
  hourglass_flowing_sand: '⏳',
  hourglass: '⌛',
  x: '❌',
  white_check_mark: '✅',
  heavy_check_mark: '✔️',
  warning: '⚠️',
  rotating_light: '🚨',
  memo: '📝',
  inbox_tray: '📥',
  sunny: '☀️',
  mag: '🔍',
  pencil2: '✏️',
  bust_in_silhouette: '👤',
  busts_in_silhouette: '👥',
  no_entry: '⛔',
  information_source: 'ℹ️',
  pager: '📟',
  telephone_receiver: '📞',
  iphone: '📱',
  calendar: '📅',
  spiral_calendar_pad: '🗓️',
  palm_tree: '🌴',
  airplane: '✈️',
  lock: '🔒',
  key: '🔑',
  bell: '🔔',
  fire: '🔥',
  tada: '🎉',
  wave: '👋',
  eyes: '👀',
  thumbsup: '👍',
  '+1': '👍',
  point_right: '👉',
  link: '🔗',
  speech_balloon: '💬',
  clock3: '🕒',
  arrow_up: '⬆️',
  arrow_right: '➡️',
  repeat: '🔁',
  stopwatch: '⏱️',
  zzz: '💤',
  sparkles: '✨',
  construction: '🚧',
};

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and attribute values. */
export const escapeHtml = (text) => String(text ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/** Slack escapes `&`, `<` and `>` in message text; undo that before escaping for HTML. */
const decodeSlack = (text) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const userName = (id, ctx) => {
  const u = ctx?.users?.[id];
  return u ? u.name : undefined;
};
const channelName = (id, ctx) => ctx?.channels?.[id]?.name;

/** One `<…>` control sequence of mrkdwn (mention, channel, link, special mention) as HTML. */
const renderControl = (inner, ctx) => {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : decodeSlack(inner.slice(bar + 1));
  if (target.startsWith('@')) {
    const id = target.slice(1);
    const name = userName(id, ctx) ?? label ?? id;
    return `<span class="mk-mention" data-user="${escapeHtml(id)}">@${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    const name = channelName(id, ctx) ?? label ?? id;
    return `<span class="mk-channel" data-channel="${escapeHtml(id)}">#${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('!')) {
    if (target.startsWith('!date^')) {
      return escapeHtml(label ?? target.split('^').slice(-1)[0] ?? '');
    }
    if (target.startsWith('!subteam^'))
      return `<span class="mk-mention">${escapeHtml(label ?? '@team')}</span>`;
    return `<span class="mk-mention">@${escapeHtml(target.slice(1))}</span>`;
  }
  const url = decodeSlack(target);
  const safe = /^(https?:|mailto:)/i.test(url) ? url : '#';
  return `<a href="${escapeHtml(safe)}" target="_blank" rel="noopener noreferrer">${escapeHtml(label ?? url)}</a>`;
};

const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/** Inline formatting of one line without code spans: controls, emoji, bold, italic, strike. */
const renderPlain = (text, ctx) => {
  const held = [];
  const hold = (html) => {
    held.push(html);
    return `\uE000${held.length - 1}\uE001`;
  };
  let s = text.replace(/<([^<>\n]+)>/g, (_m, inner) => hold(renderControl(inner, ctx)));
  s = escapeHtml(decodeSlack(s));
  s = s.replace(/:([a-z0-9_+-]+):/g, (m, name) =>
    EMOJI[name] ? hold(`<span class="mk-emoji" title=":${name}:">${EMOJI[name]}</span>`) : m,
  );
  s = s.replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?=[^\w*]|$)/g, '$1<b>$2</b>');
  s = s.replace(/(^|[^\w_])_(?=\S)([^_\n]*?\S)_(?=[^\w_]|$)/g, '$1<i>$2</i>');
  s = s.replace(/(^|[^\w~])~(?=\S)([^~\n]*?\S)~(?=[^\w~]|$)/g, '$1<s>$2</s>');
  for (let i = 0; i < 3 && PLACEHOLDER.test(s); i++) {
    s = s.replace(PLACEHOLDER, (_m, n) => held[Number(n)] ?? '');
  }
  return s;
};

/** One line: inline code spans are kept verbatim, the rest formatted. */
const renderLine = (line, ctx) =>
  line
    .split(/(`[^`\n]+`)/)
    .map((part) =>
      part.length > 2 && part.startsWith('`') && part.endsWith('`')
        ? `<code>${escapeHtml(decodeSlack(part.slice(1, -1)))}</code>`
        : renderPlain(part, ctx),
    )
    .join('');

/** Lines, with `>` quotes grouped. */
const renderLines = (text, ctx) => {
  const out = [];
  let quote = [];
  const flush = () => {
    if (quote.length) out.push(`<blockquote>${quote.join('<br>')}</blockquote>`);
    quote = [];
  };
  for (const line of text.split('\n')) {
    const m = /^(?:>|&gt;) ?(.*)$/.exec(line);
    if (m && line.startsWith('>')) {
      quote.push(renderLine(m[1] ?? '', ctx));
      continue;
    }
    flush();
    out.push(renderLine(line, ctx));
  }
  flush();
  return out
    .join('<br>')
    .replace(/<br><blockquote>/g, '<blockquote>')
    .replace(/<\/blockquote><br>/g, '</blockquote>');
};

/**
 * Slack mrkdwn to HTML: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ```` ```blocks``` ````,
 * `> quotes`, links `<url|text>`, mentions `<@U123>` (display names from `ctx.users`), channels
 * `<#C123>`, `<!here>`, and the emoji shortcodes in EMOJI. Everything else is escaped text.
 */
export const renderMrkdwn = (text, ctx = {}) => {
  const parts = String(text ?? '').split('```');
  const balanced = parts.length % 2 === 1;
  let html = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? '';
    const isCode = i % 2 === 1 && (balanced || i < parts.length - 1);
    if (isCode) {
      html += `<pre>${escapeHtml(decodeSlack(part.replace(/^\n|\n$/g, '')))}</pre>`;
    } else {
      const raw = !balanced && i === parts.length - 1 && i > 0 ? `\`\`\`${part}` : part;
      html += renderLines(raw, ctx);
    }
  }
  return html;
};

/** A text object (`plain_text` or `mrkdwn`) as HTML; plain text gets emoji and line breaks only. */
export const renderText = (obj, ctx = {}) => {
  if (obj === undefined || obj === null) return '';
  if (typeof obj === 'string') return renderMrkdwn(obj, ctx);
  const text = String(obj.text ?? '');
  if (obj.type === 'mrkdwn') return renderMrkdwn(text, ctx);
  let s = escapeHtml(text);
  if (obj.emoji !== false) {
    s = s.replace(/:([a-z0-9_+-]+):/g, (m, name) => (EMOJI[name] ? EMOJI[name] : m));
  }
  return s.replace(/\n/g, '<br>');
};

/** Plain text of a text object, for titles and labels. */
export const textOf = (obj) => (obj && typeof obj === 'object' ? String(obj.text ?? '') : String(obj ?? ''));

/**
 * The block_id Slack would show for a block. Slack makes one up when the app sent none; ours is
 * derived from the position, so the console and the payloads it sends agree.
 */
export const blockIdOf = (block, index) =>
  typeof block?.block_id === 'string' && block.block_id !== '' ? block.block_id : `sb-block-${index}`;

/** Blocks with every block_id filled in (as Slack returns a message in an interaction payload). */
export const withBlockIds = (blocks) =>
  (blocks ?? []).map((b, i) => (b && typeof b === 'object' ? { ...b, block_id: blockIdOf(b, i) } : b));

const attr = (name, value) =>
  value === undefined || value === null ? '' : ` ${name}="${escapeHtml(value)}"`;

const elementAttrs = (el, index) =>
  `${attr('data-element', index)}${attr('data-type', el.type)}${attr('data-action-id', el.action_id)}` +
  `${el.confirm ? attr('data-confirm', JSON.stringify(el.confirm)) : ''}`;

/** Every option of a select, flattened out of option_groups. */
export const optionsOf = (el) => [
  ...(Array.isArray(el?.options) ? el.options : []),
  ...(Array.isArray(el?.option_groups) ? el.option_groups.flatMap((g) => g.options ?? []) : []),
];

const optionHtml = (o, selectedValues) =>
  `<option value="${escapeHtml(o.value)}"${selectedValues.includes(o.value) ? ' selected' : ''}>${escapeHtml(textOf(o.text))}</option>`;

const placeholderOption = (el, hasSelection, fallback) =>
  `<option value=""${hasSelection ? '' : ' selected'} disabled hidden>${escapeHtml(el.placeholder ? textOf(el.placeholder) : fallback)}</option>`;

const staticSelectHtml = (el, index, cls, multiple) => {
  const initial = multiple
    ? (el.initial_options ?? []).map((o) => o.value)
    : el.initial_option
      ? [el.initial_option.value]
      : [];
  const groups = Array.isArray(el.option_groups)
    ? el.option_groups
        .map(
          (g) =>
            `<optgroup label="${escapeHtml(textOf(g.label))}">${(g.options ?? []).map((o) => optionHtml(o, initial)).join('')}</optgroup>`,
        )
        .join('')
    : '';
  const options = (el.options ?? []).map((o) => optionHtml(o, initial)).join('');
  return `<select class="${cls}"${multiple ? ' multiple size="4"' : ''}${elementAttrs(el, index)}>${multiple ? '' : placeholderOption(el, initial.length > 0, 'Select an item')}${options}${groups}</select>`;
};

const peopleOf = (ctx) =>
  ctx?.people ??
  Object.entries(ctx?.users ?? {})
    .filter(([, u]) => !u.isBot)
    .map(([id, u]) => ({ id, name: u.name }));

const usersSelectHtml = (el, index, cls, multiple, ctx) => {
  const initial = multiple ? (el.initial_users ?? []) : el.initial_user ? [el.initial_user] : [];
  const options = peopleOf(ctx)
    .map(
      (p) =>
        `<option value="${escapeHtml(p.id)}"${initial.includes(p.id) ? ' selected' : ''}>${escapeHtml(p.name)}</option>`,
    )
    .join('');
  return `<select class="${cls}"${multiple ? ' multiple size="4"' : ''}${elementAttrs(el, index)}>${multiple ? '' : placeholderOption(el, initial.length > 0, 'Select a person')}${options}</select>`;
};

const channelsSelectHtml = (el, index, cls, ctx) => {
  const initial = el.initial_conversation ?? el.initial_channel;
  const options = Object.entries(ctx?.channels ?? {})
    .filter(([, c]) => !c.isIm)
    .map(
      ([id, c]) =>
        `<option value="${escapeHtml(id)}"${initial === id ? ' selected' : ''}>#${escapeHtml(c.name)}</option>`,
    )
    .join('');
  return `<select class="${cls}"${elementAttrs(el, index)}>${placeholderOption(el, initial !== undefined, 'Select a channel')}${options}</select>`;
};

const choicesHtml = (el, index, kind, name) => {
  const initial =
    kind === 'radio'
      ? el.initial_option
        ? [el.initial_option.value]
        : []
      : (el.initial_options ?? []).map((o) => o.value);
  const items = (el.options ?? [])
    .map(
      (o) =>
        `<label class="bk-choice"><input type="${kind}" name="${escapeHtml(name)}" value="${escapeHtml(o.value)}"${initial.includes(o.value) ? ' checked' : ''}> <span>${renderText(o.text)}</span>${o.description ? `<small>${renderText(o.description)}</small>` : ''}</label>`,
    )
    .join('');
  return `<div class="bk-choices"${elementAttrs(el, index)}>${items}</div>`;
};

const imageHtml = (el) =>
  `<span class="bk-img" role="img" title="${escapeHtml(el.alt_text ?? '')}">🖼 ${escapeHtml(el.alt_text ?? 'image')}</span>`;

/** An interactive (or image) element of an actions block, a section accessory, or an input. */
export const renderElement = (el, index, ctx = {}, name = '') => {
  if (!el || typeof el !== 'object') return '';
  switch (el.type) {
    case 'button': {
      const style = el.style === 'primary' ? ' bk-primary' : el.style === 'danger' ? ' bk-danger' : '';
      return `<button type="button" class="bk-button${style}"${elementAttrs(el, index)}${attr('data-url', el.url)}>${renderText(el.text, ctx)}</button>`;
    }
    case 'static_select':
    case 'external_select':
      return staticSelectHtml(el, index, 'bk-select', false);
    case 'multi_static_select':
    case 'multi_external_select':
      return staticSelectHtml(el, index, 'bk-select', true);
    case 'users_select':
      return usersSelectHtml(el, index, 'bk-select', false, ctx);
    case 'multi_users_select':
      return usersSelectHtml(el, index, 'bk-select', true, ctx);
    case 'conversations_select':
    case 'channels_select':
      return channelsSelectHtml(el, index, 'bk-select', ctx);
    case 'overflow':
      return `<select class="bk-overflow" title="More actions"${elementAttrs(el, index)}><option value="" selected disabled hidden>⋯</option>${optionsOf(
        el,
      )
        .map((o) => optionHtml(o, []))
        .join('')}</select>`;
    case 'datepicker':
      return `<input type="date" class="bk-date"${attr('value', el.initial_date)}${elementAttrs(el, index)}>`;
    case 'timepicker':
      return `<input type="time" class="bk-date"${attr('value', el.initial_time)}${elementAttrs(el, index)}>`;
    case 'radio_buttons':
      return choicesHtml(el, index, 'radio', name || `radio-${index}`);
    case 'checkboxes':
      return choicesHtml(el, index, 'checkbox', name || `check-${index}`);
    case 'image':
      return imageHtml(el);
    case 'plain_text_input':
    case 'email_text_input':
    case 'url_text_input':
    case 'number_input':
      return textInputHtml(el, index);
    default:
      return `<span class="bk-unsupported">[${escapeHtml(el.type)}]</span>`;
  }
};

function textInputHtml(el, index) {
  const common = `${attr('placeholder', el.placeholder ? textOf(el.placeholder) : undefined)}${attr('maxlength', el.max_length)}${attr('minlength', el.min_length)}${elementAttrs(el, index)}`;
  if (el.type === 'plain_text_input' && el.multiline) {
    return `<textarea class="bk-text" rows="4"${common}>${escapeHtml(el.initial_value ?? '')}</textarea>`;
  }
  const type =
    el.type === 'email_text_input'
      ? 'email'
      : el.type === 'url_text_input'
        ? 'url'
        : el.type === 'number_input'
          ? 'number'
          : 'text';
  return `<input type="${type}" class="bk-text"${attr('value', el.initial_value)}${common}>`;
}

const sectionHtml = (b, ctx) => {
  const text = b.text ? `<div class="bk-section-text">${renderText(b.text, ctx)}</div>` : '';
  const fields = Array.isArray(b.fields)
    ? `<div class="bk-fields">${b.fields.map((f) => `<div class="bk-field">${renderText(f, ctx)}</div>`).join('')}</div>`
    : '';
  const accessory = b.accessory
    ? `<div class="bk-accessory">${renderElement(b.accessory, 'accessory', ctx)}</div>`
    : '';
  return `<div class="bk-section-body">${text}${fields}</div>${accessory}`;
};

const richTextHtml = (el, ctx) => {
  if (!el || typeof el !== 'object') return '';
  if (el.type === 'text') return escapeHtml(el.text ?? '').replace(/\n/g, '<br>');
  if (el.type === 'link') return renderControl(`${el.url}|${el.text ?? el.url}`, ctx);
  if (el.type === 'user') return renderControl(`@${el.user_id}`, ctx);
  if (el.type === 'channel') return renderControl(`#${el.channel_id}`, ctx);
  if (el.type === 'emoji') return EMOJI[el.name] ?? `:${escapeHtml(el.name)}:`;
  return (el.elements ?? []).map((e) => richTextHtml(e, ctx)).join('');
};

/** An input block as a labelled form field (modals; messages rarely carry them). */
const inputHtml = (b, index, ctx, error) => {
  const el = b.element ?? {};
  const name = `${blockIdOf(b, index)}::${el.action_id ?? ''}`;
  const optional = b.optional ? ' <span class="bk-optional">(optional)</span>' : '';
  const hint = b.hint ? `<div class="bk-hint">${renderText(b.hint, ctx)}</div>` : '';
  const err = error ? `<div class="bk-error" role="alert">${escapeHtml(error)}</div>` : '';
  return `<label class="bk-label">${escapeHtml(textOf(b.label))}${optional}</label>${renderElement(el, 0, ctx, name)}${hint}${err}`;
};

/**
 * One block as HTML. Interactive elements carry `data-element` (index, or `accessory`),
 * `data-type`, `data-action-id` and `data-confirm`; their block carries `data-block-index` and
 * `data-block-id`, which is what the console sends back when something is clicked.
 */
export const renderBlock = (b, index, ctx = {}, errors = {}) => {
  if (!b || typeof b !== 'object') return '';
  const blockId = blockIdOf(b, index);
  const open = (cls) =>
    `<div class="bk ${cls}" data-block-index="${index}" data-block-id="${escapeHtml(blockId)}">`;
  switch (b.type) {
    case 'header':
      return `${open('bk-header')}${renderText(b.text, ctx)}</div>`;
    case 'section':
      return `${open('bk-section')}${sectionHtml(b, ctx)}</div>`;
    case 'context':
      return `${open('bk-context')}${(b.elements ?? [])
        .map((e) =>
          e?.type === 'image' ? imageHtml(e) : `<span class="bk-context-text">${renderText(e, ctx)}</span>`,
        )
        .join('')}</div>`;
    case 'divider':
      return `${open('bk-divider')}<hr></div>`;
    case 'actions':
      return `${open('bk-actions')}${(b.elements ?? []).map((e, j) => renderElement(e, j, ctx, `${blockId}::${j}`)).join('')}</div>`;
    case 'image':
      return `${open('bk-image')}${b.title ? `<div class="bk-image-title">${renderText(b.title, ctx)}</div>` : ''}<div class="bk-image-box" role="img" title="${escapeHtml(b.alt_text ?? '')}">🖼 ${escapeHtml(b.alt_text ?? 'image')}</div></div>`;
    case 'input': {
      const el = b.element ?? {};
      return `<div class="bk bk-input${errors[blockId] ? ' bk-has-error' : ''}" data-block-index="${index}" data-block-id="${escapeHtml(blockId)}"${attr('data-action-id', el.action_id)}${attr('data-type', el.type)}>${inputHtml(b, index, ctx, errors[blockId])}</div>`;
    }
    case 'rich_text':
      return `${open('bk-rich')}${(b.elements ?? []).map((e) => richTextHtml(e, ctx)).join('<br>')}</div>`;
    default:
      return `${open('bk-unsupported')}Unsupported block: ${escapeHtml(b.type)}</div>`;
  }
};

/** Blocks as HTML; `errors` (block_id → message) are shown under their input blocks. */
export const renderBlocks = (blocks, ctx = {}, errors = {}) =>
  (Array.isArray(blocks) ? blocks : []).map((b, i) => renderBlock(b, i, ctx, errors)).join('');

/** A message body: its blocks when it has any, else its mrkdwn text. */
export const renderMessageBody = (message, ctx = {}) =>
  Array.isArray(message?.blocks) && message.blocks.length > 0
    ? renderBlocks(message.blocks, ctx)
    : `<div class="bk-text-only">${renderMrkdwn(message?.text ?? '', ctx)}</div>`;

/** A modal or Home view: title, button labels and body HTML. */
export const renderView = (view, ctx = {}, errors = {}) => ({
  title: textOf(view?.title) || (view?.type === 'home' ? 'Home' : 'Modal'),
  submit: view?.submit ? textOf(view.submit) : undefined,
  close: view?.close ? textOf(view.close) : 'Cancel',
  body: renderBlocks(view?.blocks, ctx, errors),
});

/** The element at `elementIndex` (a number, or `accessory`) of the block at `blockIndex`. */
export const findElement = (blocks, blockIndex, elementIndex) => {
  const block = Array.isArray(blocks) ? blocks[Number(blockIndex)] : undefined;
  if (!block || typeof block !== 'object') return undefined;
  let element;
  if (elementIndex === 'accessory') element = block.accessory;
  else if (block.type === 'input') element = block.element;
  else element = Array.isArray(block.elements) ? block.elements[Number(elementIndex)] : undefined;
  if (!element || typeof element !== 'object') return undefined;
  return { block, blockId: blockIdOf(block, Number(blockIndex)), element };
};

/** The option of a select / radio / overflow element with this value, as Slack echoes it. */
export const optionByValue = (el, value) => {
  const o = optionsOf(el).find((x) => x.value === value);
  return o
    ? { text: o.text, value: o.value, ...(o.description ? { description: o.description } : {}) }
    : null;
};

const asList = (raw) =>
  Array.isArray(raw) ? raw : raw === undefined || raw === null || raw === '' ? [] : [raw];
const asOne = (raw) => {
  const v = Array.isArray(raw) ? raw[0] : raw;
  return v === undefined || v === null || v === '' ? null : String(v);
};

/**
 * What Slack puts in `view.state.values[block_id][action_id]` for an input element, from what the
 * person entered (`raw`: a string, or a list for multi-selects and checkboxes).
 */
export const stateValue = (el, raw) => {
  const type = el?.type;
  switch (type) {
    case 'plain_text_input':
    case 'email_text_input':
    case 'url_text_input':
    case 'number_input':
      return { type, value: asOne(raw) };
    case 'static_select':
    case 'external_select':
    case 'radio_buttons': {
      const v = asOne(raw);
      return { type, selected_option: v === null ? null : optionByValue(el, v) };
    }
    case 'multi_static_select':
    case 'multi_external_select':
    case 'checkboxes':
      return {
        type,
        selected_options: asList(raw)
          .map((v) => optionByValue(el, String(v)))
          .filter(Boolean),
      };
    case 'users_select':
      return { type, selected_user: asOne(raw) };
    case 'multi_users_select':
      return { type, selected_users: asList(raw).map(String) };
    case 'conversations_select':
      return { type, selected_conversation: asOne(raw) };
    case 'channels_select':
      return { type, selected_channel: asOne(raw) };
    case 'datepicker':
      return { type, selected_date: asOne(raw) };
    case 'timepicker':
      return { type, selected_time: asOne(raw) };
    default:
      return { type, value: asOne(raw) };
  }
};

/**
 * The `actions[0]` entry of a `block_actions` payload for a click on `el` (a button) or a pick
 * (`raw` = the chosen value or values).
 */
export const actionOf = (el, blockId, raw, actionTs) => {
  const base = { type: el.type, action_id: el.action_id, block_id: blockId, action_ts: actionTs };
  switch (el.type) {
    case 'button':
      return {
        ...base,
        text: el.text,
        ...(el.value !== undefined ? { value: el.value } : {}),
        ...(el.style ? { style: el.style } : {}),
      };
    case 'overflow':
      return { ...base, selected_option: optionByValue(el, String(asOne(raw) ?? '')) };
    case 'static_select':
    case 'external_select':
    case 'radio_buttons':
    case 'multi_static_select':
    case 'multi_external_select':
    case 'checkboxes':
    case 'users_select':
    case 'multi_users_select':
    case 'conversations_select':
    case 'channels_select':
    case 'datepicker':
    case 'timepicker': {
      const { type: _type, ...value } = stateValue(el, raw);
      return { ...base, ...value, ...(el.placeholder ? { placeholder: el.placeholder } : {}) };
    }
    default:
      return { ...base, ...(el.value !== undefined ? { value: el.value } : {}) };
  }
};

/**
 * `view.state.values` for a view's input blocks from `raw` (block_id → action_id → entry). Inputs
 * the person did not touch keep their initial values, as in Slack.
 */
export const viewStateValues = (view, raw = {}) => {
  const values = {};
  (Array.isArray(view?.blocks) ? view.blocks : []).forEach((b, i) => {
    if (b?.type !== 'input' || !b.element?.action_id) return;
    const blockId = blockIdOf(b, i);
    const el = b.element;
    const given = raw?.[blockId]?.[el.action_id];
    const entry = given === undefined ? initialRaw(el) : given;
    values[blockId] = { [el.action_id]: stateValue(el, entry) };
  });
  return values;
};

/** What an untouched input holds. */
export const initialRaw = (el) => {
  switch (el?.type) {
    case 'static_select':
    case 'external_select':
    case 'radio_buttons':
      return el.initial_option?.value ?? null;
    case 'multi_static_select':
    case 'multi_external_select':
    case 'checkboxes':
      return (el.initial_options ?? []).map((o) => o.value);
    case 'users_select':
      return el.initial_user ?? null;
    case 'multi_users_select':
      return el.initial_users ?? [];
    case 'conversations_select':
      return el.initial_conversation ?? null;
    case 'channels_select':
      return el.initial_channel ?? null;
    case 'datepicker':
      return el.initial_date ?? null;
    case 'timepicker':
      return el.initial_time ?? null;
    default:
      return el?.initial_value ?? null;
  }
};
