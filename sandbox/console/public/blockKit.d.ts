// Types of blockKit.js (plain JavaScript so the page loads it without a build step).

/** A Block Kit object as the app sent it: checked loosely, rendered defensively. */
export type BlockKitObject = Record<string, unknown> & { type?: string };

export type RenderContext = Readonly<{
  /** Slack user id → display name (mentions, user selects). */
  users?: Readonly<Record<string, Readonly<{ name: string; isBot?: boolean }>>>;
  /** Channel id → name (channel mentions, conversation selects). */
  channels?: Readonly<Record<string, Readonly<{ name: string; isIm?: boolean }>>>;
  /** People offered by user selects; default: every user that is not a bot. */
  people?: ReadonlyArray<Readonly<{ id: string; name: string }>>;
}>;

/** block_id → error text, as a `response_action: errors` answer gives them. */
export type InputErrors = Readonly<Record<string, string>>;

/** What a person entered in one element: a value, or a list for multi-selects and checkboxes. */
export type RawValue = string | readonly string[] | null | undefined;

export type SelectedOption = Readonly<{ text: unknown; value: string; description?: unknown }>;

export type StateValue = Readonly<{
  type: string | undefined;
  value?: string | null;
  selected_option?: SelectedOption | null;
  selected_options?: SelectedOption[];
  selected_user?: string | null;
  selected_users?: string[];
  selected_conversation?: string | null;
  selected_channel?: string | null;
  selected_date?: string | null;
  selected_time?: string | null;
}>;

export type ViewState = Record<string, Record<string, StateValue>>;

export type BlockAction = Readonly<
  {
    type: string;
    action_id: string;
    block_id: string;
    action_ts: string;
    text?: unknown;
    value?: string;
    style?: string;
    placeholder?: unknown;
  } & Omit<StateValue, 'type'>
>;

export declare const EMOJI: Readonly<Record<string, string>>;
export declare const escapeHtml: (text: unknown) => string;
export declare const renderMrkdwn: (text: unknown, ctx?: RenderContext) => string;
export declare const renderText: (obj: unknown, ctx?: RenderContext) => string;
export declare const textOf: (obj: unknown) => string;
export declare const blockIdOf: (block: unknown, index: number) => string;
export declare const withBlockIds: (blocks: readonly unknown[] | undefined) => unknown[];
export declare const optionsOf: (el: unknown) => Array<{ text: unknown; value: string }>;
export declare const renderElement: (
  el: unknown,
  index: number | 'accessory',
  ctx?: RenderContext,
  name?: string,
) => string;
export declare const renderBlock: (
  block: unknown,
  index: number,
  ctx?: RenderContext,
  errors?: InputErrors,
) => string;
export declare const renderBlocks: (blocks: unknown, ctx?: RenderContext, errors?: InputErrors) => string;
export declare const renderMessageBody: (
  message: Readonly<{ text?: string; blocks?: unknown }> | undefined,
  ctx?: RenderContext,
) => string;
export declare const renderView: (
  view: unknown,
  ctx?: RenderContext,
  errors?: InputErrors,
) => { title: string; submit: string | undefined; close: string; body: string };
export declare const findElement: (
  blocks: unknown,
  blockIndex: number | string,
  elementIndex: number | string,
) => { block: BlockKitObject; blockId: string; element: BlockKitObject } | undefined;
export declare const optionByValue: (el: unknown, value: string) => SelectedOption | null;
export declare const stateValue: (el: unknown, raw: RawValue) => StateValue;
export declare const actionOf: (
  el: BlockKitObject,
  blockId: string,
  raw: RawValue,
  actionTs: string,
) => BlockAction;
export declare const viewStateValues: (
  view: unknown,
  raw?: Readonly<Record<string, Readonly<Record<string, RawValue>>>>,
) => ViewState;
export declare const initialRaw: (el: unknown) => RawValue;
