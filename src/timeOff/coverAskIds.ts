import type { CoverPerson, CoverSlot } from '../../machines/timeOff/cover.ts';
import { type CoverAskReason, parseCoverAskId } from '../../machines/timeOff/coverAsk.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject } from '../core/messages.ts';

/**
 * Ids and the one way to open an ask (issue 20, machines/timeOff/coverAsk.ts).
 *
 * Button values carry only the ask id (a UUID); who may act is the decider's to check against what
 * the ask recorded (asked, open to anyone, the absent person), never the button's.
 */
export const COVER_ASK_ACTION = {
  /** In an asked colleague's DM. */
  accept: 'timeoff.coverask_accept',
  decline: 'timeoff.coverask_decline',
  /** On a hole posted in a schedule's channel: the clicker covers it (with a confirm). */
  take: 'timeoff.coverask_take',
} as const;

const BLOCK_PREFIX = 'timeoff.coverask:';

export const coverAskBlockId = (askId: string): string => BLOCK_PREFIX + askId;

export const askIdFromBlockId = (blockId: unknown): string | null =>
  typeof blockId === 'string' && blockId.startsWith(BLOCK_PREFIX)
    ? parseCoverAskId(blockId.slice(BLOCK_PREFIX.length))
    : null;

/** The cover an ask issues when taken: derived from the ask, so a redelivery issues the same one. */
export const coverIdForAsk = (askId: string): string => uuidv5(`timeoffcoverask:${askId}:cover`);

const slotKey = (slot: CoverSlot): string => `${slot.scheduleId}|${slot.start}|${slot.end}`;

/**
 * The ask id of one slot opened for `reason`: the same slot asked again for the same reason is the
 * same ask (so every surface offering it meets in one stream, and the first cover wins there).
 * `round` > 0 opens the slot again after an earlier ask of it was settled (a cover who can't).
 */
export const coverAskIdFor = (reason: CoverAskReason, slot: CoverSlot, round = 0): string => {
  const why =
    reason.kind === 'time_off'
      ? `time_off:${reason.timeOffId}`
      : reason.kind === 'leaver'
        ? `leaver:${reason.hrId}:${reason.index}`
        : 'on_call';
  return uuidv5(`timeoffcoverask:${why}:${slotKey(slot)}${round > 0 ? `:${round}` : ''}`);
};

/** How long before a shift an ask nobody took expires, by default (the approver and the channel are told then). */
export const COVER_ASK_LEAD_MS = 60 * 60_000;

/**
 * When an ask expires: `lead` before the shift starts; a shift already near or under way when asked
 * stays asked until it ends (covering its rest still helps).
 */
export const coverAskExpiry = (slot: CoverSlot, now: Date, leadMs = COVER_ASK_LEAD_MS): string => {
  const near = Date.parse(slot.start) - leadMs;
  return near > now.getTime() ? new Date(near).toISOString() : slot.end;
};

export type OpenCoverAskInput = Readonly<{
  slot: CoverSlot;
  absent: CoverPerson;
  /** Asked by DM, best first (the absent person and duplicates are dropped here). */
  asked: readonly CoverPerson[];
  /** Anyone may take it (a hole in a channel); else only those asked. */
  anyone: boolean;
  /** Posted in the schedule's channels with a Cover… button. */
  announce: boolean;
  openedBy: string;
  notify: readonly string[];
  reason: CoverAskReason;
  now: Date;
  leadMs?: number;
  round?: number;
  /** Never offered and refused if they click (a cover who said can't). */
  excluded?: readonly string[];
}>;

/**
 * THE way to open an ask for one slot (a hole): the `OpenCoverAsk` command, its id derived from the
 * reason and the slot. Dispatch it with `metadata` (actor: the opener, or a `system:` processor).
 *
 * @example
 * await dispatch(openCoverAskCommand({ slot, absent, asked: [], anyone: true, announce: true,
 *   openedBy: approver, notify: [approver], reason: { kind: 'time_off', timeOffId }, now }, metadata));
 */
export const openCoverAskCommand = (
  input: OpenCoverAskInput,
  metadata: CommandMetadata,
): Readonly<{ askId: string; command: Command }> => {
  const seen = new Set<string>([input.absent.slackUserId]);
  const asked = input.asked.filter((p) => {
    if (seen.has(p.slackUserId)) return false;
    seen.add(p.slackUserId);
    return true;
  });
  const askId = coverAskIdFor(input.reason, input.slot, input.round ?? 0);
  const data = {
    askId,
    slot: { ...input.slot },
    absent: { ...input.absent },
    asked: asked.slice(0, 20).map((p) => ({ ...p })),
    anyone: input.anyone,
    announce: input.announce,
    expiresAt: coverAskExpiry(input.slot, input.now, input.leadMs),
    openedBy: input.openedBy,
    notify: [...new Set(input.notify)].slice(0, 20),
    reason: { ...input.reason },
    ...(input.excluded && input.excluded.length > 0
      ? { excluded: [...new Set(input.excluded)].slice(0, 20) }
      : {}),
  };
  return { askId, command: { type: 'OpenCoverAsk', data: data as unknown as JsonObject, metadata } };
};
