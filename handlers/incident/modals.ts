import type { ModalView } from '../../src/slack/blocks/format.ts';

/**
 * The modal with the channel it was opened from added to its `private_metadata`, so the submission
 * can be answered there (a view submission carries no channel of its own). The block builders'
 * readers ignore keys they do not know.
 */
export const withChannel = (view: ModalView, channel: string | null | undefined): ModalView => {
  if (!channel) return view;
  let meta: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(view.private_metadata ?? '{}');
    if (parsed && typeof parsed === 'object') meta = parsed as Record<string, unknown>;
  } catch {
    meta = {};
  }
  return { ...view, private_metadata: JSON.stringify({ ...meta, channel }) };
};

/** The channel a modal was opened from (see withChannel), or undefined. */
export const channelOf = (privateMetadata: string | undefined): string | undefined => {
  try {
    const parsed = JSON.parse(privateMetadata ?? '{}') as { channel?: unknown };
    return typeof parsed.channel === 'string' && parsed.channel !== '' ? parsed.channel : undefined;
  } catch {
    return undefined;
  }
};
