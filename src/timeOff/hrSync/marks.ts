import { uuidv5 } from '../../core/ids.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { EventStore } from '../../eventStore/eventStore.ts';

/**
 * Durable marks: when the HR sync last polled HR's changes (`HrChangesPolled` on `hrsync-changes`)
 * and last read the directory (`HrDirectoryRead` on `hrsync-directory`), so a restart goes on from
 * there.
 */

export const HR_SYNC_CHANGES_STREAM = 'hrsync-changes';
export const HR_SYNC_DIRECTORY_STREAM = 'hrsync-directory';

/** The data of the stream's last mark, or null. */
export const lastMark = async (
  store: EventStore,
  streamId: string,
): Promise<Record<string, unknown> | null> => {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  return last && last.kind === 'event' ? (last.data as Record<string, unknown>) : null;
};

/** Appends a mark (its id from its data: the same mark twice is one). */
export const mark = async (
  store: EventStore,
  streamId: string,
  type: string,
  data: JsonObject,
): Promise<void> => {
  await store.appendToStream(streamId, [{ id: uuidv5(`${streamId}:${JSON.stringify(data)}`), type, data }], {
    expectedRevision: 'any',
  });
};
