/**
 * What Slack refuses in a message or a view, checked by the fake Slack on chat.postMessage,
 * chat.update, chat.postEphemeral, response_url posts and views.open/update/push/publish.
 *
 * The limits are Slack's documented ones (one table, LIMITS, with where each is written). How Slack
 * answers a breach, as its Web API does:
 * - messages: `invalid_blocks` with `errors` and `response_metadata.messages`
 *   (`[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]`);
 *   `invalid_blocks_format` when `blocks` is not a JSON array of objects; `msg_too_long` when the
 *   message's `text` is over 40,000 characters (chat.postMessage's error list);
 * - views: `invalid_arguments` with `response_metadata.messages` in the same form, pointers under
 *   `/view` (views.open's error list and its documented answer).
 * A string holding a lone UTF-16 surrogate (half an emoji: the JSON body carries `\ud83d` alone)
 * is refused the same way: Slack cannot store it as UTF-8.
 *
 * Counting: Slack's reference says "characters" without defining them. The fake counts Unicode
 * code points (`[...s].length`): 👍 is 1, a ZWJ family emoji is several, `&amp;` is 5 (text is
 * counted as sent, entities included). So text cut by grapheme must still fit in code points;
 * counting UTF-16 units would be stricter than Slack for every emoji, counting graphemes looser.
 */

/** Source of every limit below unless said otherwise. */
export const BLOCK_KIT_REFERENCE = 'https://api.slack.com/reference/block-kit';

type Limit = Readonly<{ max: number; source: string }>;

const BLOCKS = `${BLOCK_KIT_REFERENCE}/blocks`;
const ELEMENTS = `${BLOCK_KIT_REFERENCE}/block-elements`;
const OBJECTS = `${BLOCK_KIT_REFERENCE}/composition-objects`;
const SURFACES = 'https://api.slack.com/reference/surfaces/views';

/** Slack's limits, each with the page that states it (counted as described above). */
export const LIMITS = {
  messageBlocks: { max: 50, source: `${BLOCKS} ("up to 50 blocks in each message")` },
  viewBlocks: { max: 100, source: `${BLOCKS} ("up to 100 blocks in modals or Home tabs")` },
  messageText: {
    max: 40_000,
    source: 'https://api.slack.com/methods/chat.postMessage#truncating (msg_too_long)',
  },
  textObject: { max: 3_000, source: `${OBJECTS}#text` },
  sectionText: { max: 3_000, source: `${BLOCKS}#section` },
  sectionFields: { max: 10, source: `${BLOCKS}#section` },
  sectionFieldText: { max: 2_000, source: `${BLOCKS}#section` },
  headerText: { max: 150, source: `${BLOCKS}#header (plain_text only)` },
  blockId: { max: 255, source: `${BLOCKS} (block_id, unique in a message or view)` },
  actionId: { max: 255, source: ELEMENTS },
  actionsElements: { max: 25, source: `${BLOCKS}#actions` },
  contextElements: { max: 10, source: `${BLOCKS}#context` },
  inputLabel: { max: 2_000, source: `${BLOCKS}#input` },
  inputHint: { max: 2_000, source: `${BLOCKS}#input` },
  buttonText: { max: 75, source: `${ELEMENTS}#button` },
  buttonValue: { max: 2_000, source: `${ELEMENTS}#button` },
  buttonUrl: { max: 3_000, source: `${ELEMENTS}#button` },
  placeholder: { max: 150, source: ELEMENTS },
  selectOptions: { max: 100, source: `${ELEMENTS}#static_select` },
  optionGroups: { max: 100, source: `${ELEMENTS}#static_select` },
  optionGroupLabel: { max: 75, source: `${OBJECTS}#option_group` },
  overflowOptions: { max: 5, source: `${ELEMENTS}#overflow` },
  choiceOptions: { max: 10, source: `${ELEMENTS}#checkboxes, #radio` },
  optionText: { max: 75, source: `${OBJECTS}#option` },
  optionValue: { max: 150, source: `${OBJECTS}#option` },
  optionDescription: { max: 75, source: `${OBJECTS}#option` },
  confirmTitle: { max: 100, source: `${OBJECTS}#confirm` },
  confirmText: { max: 300, source: `${OBJECTS}#confirm` },
  confirmButton: { max: 30, source: `${OBJECTS}#confirm (confirm and deny)` },
  viewTitle: { max: 24, source: `${SURFACES}#modal (title, plain_text)` },
  viewButton: { max: 24, source: `${SURFACES}#modal (submit and close, plain_text)` },
  privateMetadata: { max: 3_000, source: `${SURFACES} (private_metadata)` },
  callbackId: { max: 255, source: `${SURFACES} (callback_id)` },
  externalId: { max: 255, source: `${SURFACES} (external_id)` },
} as const satisfies Record<string, Limit>;

export type LimitName = keyof typeof LIMITS;

/** Characters as the fake counts them: Unicode code points (see the module comment). */
export const slackLength = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** A UTF-16 unit that is half of a surrogate pair with no other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s);

type Json = Record<string, unknown>;

/** Problems found, each as Slack words it: `must be less than 76 characters [json-pointer:/blocks/0/…]`. */
class Problems {
  readonly list: string[] = [];
  add(pointer: string, what: string): void {
    this.list.push(`${what} [json-pointer:${pointer}]`);
  }
  length(pointer: string, value: unknown, limit: LimitName): void {
    if (typeof value !== 'string') return;
    const { max } = LIMITS[limit];
    if (slackLength(value) > max) this.add(pointer, `must be less than ${max + 1} characters`);
  }
  items(pointer: string, value: unknown, limit: LimitName): void {
    if (!Array.isArray(value)) return;
    const { max } = LIMITS[limit];
    if (value.length > max) this.add(pointer, `must be less than ${max + 1} items`);
  }
  /** A text object's `text`; with `plainOnly`, a `mrkdwn` one is refused. */
  text(pointer: string, value: unknown, limit: LimitName, plainOnly = false): void {
    if (!isObject(value)) return;
    if (plainOnly && value['type'] !== 'plain_text') this.add(`${pointer}/type`, 'must be plain_text');
    this.length(`${pointer}/text`, value['text'], limit);
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const each = (value: unknown, fn: (item: unknown, i: number) => void): void => {
  if (!Array.isArray(value)) return;
  value.forEach((item: unknown, i) => {
    fn(item, i);
  });
};

/** Every string in `value` holding a lone surrogate, with its pointer. */
const surrogates = (p: Problems, pointer: string, value: unknown): void => {
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) p.add(pointer, 'must not contain a lone surrogate (invalid UTF-16)');
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      surrogates(p, `${pointer}/${i}`, v);
    });
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (hasLoneSurrogate(k)) p.add(`${pointer}/${k}`, 'must not contain a lone surrogate (invalid UTF-16)');
      surrogates(p, `${pointer}/${k}`, v);
    }
  }
};

const confirm = (p: Problems, pointer: string, value: unknown): void => {
  if (!isObject(value)) return;
  p.text(`${pointer}/title`, value['title'], 'confirmTitle', true);
  p.text(`${pointer}/text`, value['text'], 'confirmText');
  p.text(`${pointer}/confirm`, value['confirm'], 'confirmButton', true);
  p.text(`${pointer}/deny`, value['deny'], 'confirmButton', true);
};

const option = (p: Problems, pointer: string, value: unknown): void => {
  if (!isObject(value)) return;
  p.text(`${pointer}/text`, value['text'], 'optionText');
  p.length(`${pointer}/value`, value['value'], 'optionValue');
  p.text(`${pointer}/description`, value['description'], 'optionDescription');
};

const options = (p: Problems, pointer: string, value: unknown, limit: LimitName): void => {
  p.items(pointer, value, limit);
  each(value, (o, i) => option(p, `${pointer}/${i}`, o));
};

/** An interactive element (button, select, overflow, input, date picker…) wherever it sits. */
const element = (p: Problems, pointer: string, value: unknown): void => {
  if (!isObject(value)) return;
  const type = value['type'];
  p.length(`${pointer}/action_id`, value['action_id'], 'actionId');
  p.text(`${pointer}/placeholder`, value['placeholder'], 'placeholder');
  confirm(p, `${pointer}/confirm`, value['confirm']);
  if (type === 'button') {
    p.text(`${pointer}/text`, value['text'], 'buttonText', true);
    p.length(`${pointer}/value`, value['value'], 'buttonValue');
    p.length(`${pointer}/url`, value['url'], 'buttonUrl');
  } else if (type === 'overflow') {
    options(p, `${pointer}/options`, value['options'], 'overflowOptions');
  } else if (type === 'checkboxes' || type === 'radio_buttons') {
    options(p, `${pointer}/options`, value['options'], 'choiceOptions');
  } else if (type === 'image') {
    // context images: nothing counted here
  } else if (type === 'mrkdwn' || type === 'plain_text') {
    p.length(`${pointer}/text`, value['text'], 'textObject');
  } else {
    options(p, `${pointer}/options`, value['options'], 'selectOptions');
    p.items(`${pointer}/option_groups`, value['option_groups'], 'optionGroups');
    each(value['option_groups'], (g, i) => {
      if (!isObject(g)) return;
      p.text(`${pointer}/option_groups/${i}/label`, g['label'], 'optionGroupLabel', true);
      options(p, `${pointer}/option_groups/${i}/options`, g['options'], 'selectOptions');
    });
    if (isObject(value['initial_option'])) option(p, `${pointer}/initial_option`, value['initial_option']);
  }
};

const block = (p: Problems, pointer: string, value: unknown, ids: Set<string>): void => {
  if (!isObject(value)) {
    p.add(pointer, 'must be an object');
    return;
  }
  const id = value['block_id'];
  if (typeof id === 'string') {
    p.length(`${pointer}/block_id`, id, 'blockId');
    if (ids.has(id))
      p.add(`${pointer}/block_id`, 'must be unique in the message or view (duplicate block_id)');
    ids.add(id);
  }
  switch (value['type']) {
    case 'section':
      p.text(`${pointer}/text`, value['text'], 'sectionText');
      p.items(`${pointer}/fields`, value['fields'], 'sectionFields');
      each(value['fields'], (f, i) => p.text(`${pointer}/fields/${i}`, f, 'sectionFieldText'));
      element(p, `${pointer}/accessory`, value['accessory']);
      break;
    case 'header':
      p.text(`${pointer}/text`, value['text'], 'headerText', true);
      break;
    case 'actions':
      p.items(`${pointer}/elements`, value['elements'], 'actionsElements');
      each(value['elements'], (e, i) => element(p, `${pointer}/elements/${i}`, e));
      break;
    case 'context':
      p.items(`${pointer}/elements`, value['elements'], 'contextElements');
      each(value['elements'], (e, i) => element(p, `${pointer}/elements/${i}`, e));
      break;
    case 'input':
      p.text(`${pointer}/label`, value['label'], 'inputLabel', true);
      p.text(`${pointer}/hint`, value['hint'], 'inputHint', true);
      element(p, `${pointer}/element`, value['element']);
      break;
    default:
      break;
  }
};

const blocksOf = (p: Problems, pointer: string, value: unknown, limit: LimitName): void => {
  p.items(pointer, value, limit);
  const ids = new Set<string>();
  each(value, (b, i) => block(p, `${pointer}/${i}`, b, ids));
};

/** What Slack answers when it refuses: its `error` and the extra fields of its answer. */
export type Refusal = Readonly<{ error: string; extra: Record<string, unknown> }>;

const messages = (list: readonly string[]) => ({ messages: list.map((m) => `[ERROR] ${m}`) });

/**
 * A message's `text` and `blocks` (chat.postMessage, chat.update, chat.postEphemeral, response_url)
 * as Slack judges them; undefined when Slack takes it. `blocks` is what arrived (parsed JSON).
 */
export const checkMessage = (text: unknown, blocks: unknown): Refusal | undefined => {
  if (blocks !== undefined && (!Array.isArray(blocks) || blocks.some((b) => !isObject(b)))) {
    return { error: 'invalid_blocks_format', extra: {} };
  }
  const p = new Problems();
  if (Array.isArray(blocks)) {
    blocksOf(p, '/blocks', blocks, 'messageBlocks');
    surrogates(p, '/blocks', blocks);
    if (p.list.length > 0)
      return { error: 'invalid_blocks', extra: { errors: p.list, response_metadata: messages(p.list) } };
  }
  if (typeof text === 'string') {
    if (slackLength(text) > LIMITS.messageText.max) return { error: 'msg_too_long', extra: {} };
    surrogates(p, '/text', text);
    if (p.list.length > 0)
      return { error: 'invalid_arguments', extra: { response_metadata: messages(p.list) } };
  }
  return undefined;
};

/** A view (modal or Home tab) as Slack judges it; undefined when Slack takes it. */
export const checkViewContent = (view: Json): Refusal | undefined => {
  const p = new Problems();
  const at = '/view';
  blocksOf(p, `${at}/blocks`, view['blocks'], 'viewBlocks');
  p.text(`${at}/title`, view['title'], 'viewTitle', true);
  p.text(`${at}/submit`, view['submit'], 'viewButton', true);
  p.text(`${at}/close`, view['close'], 'viewButton', true);
  p.length(`${at}/private_metadata`, view['private_metadata'], 'privateMetadata');
  p.length(`${at}/callback_id`, view['callback_id'], 'callbackId');
  p.length(`${at}/external_id`, view['external_id'], 'externalId');
  surrogates(p, at, view);
  return p.list.length > 0
    ? { error: 'invalid_arguments', extra: { response_metadata: messages(p.list) } }
    : undefined;
};
