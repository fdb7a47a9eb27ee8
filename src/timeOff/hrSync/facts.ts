import type { HrTimeOffEntry } from '../../../machines/timeOff/hrCalendar.ts';
import type { Clock } from '../../core/clock.ts';
import { uuidv5 } from '../../core/ids.ts';
import type { Command, JsonObject } from '../../core/messages.ts';
import type { Logger } from '../../logger.ts';
import { type Dispatch, dispatchCommand } from '../../processors/dispatchCommand.ts';
import type { TimeOffReadModel } from '../readModel.projection.ts';

/**
 * Recording what HR knows as facts: each command's id derived from what it records (a redelivery or
 * a second poll records nothing twice), and an HR entry matched to Switchboard's own requests.
 */

export const TIME_OFF_HR_READS_PROCESSOR = 'timeoff-hr-reads';
const ACTOR = 'system:timeoff-hr-sync';

export type HrFacts = Readonly<{
  /** A command of the HR sync (id from `key`, actor the sync). */
  command(type: string, data: object, key: string, causationId?: string): Command;
  /** Dispatches it; a refusal is logged, not thrown (the fact is known already, or moot). */
  record(command: Command): Promise<void>;
  /** Records HR's entry, then what it means for one of our requests. */
  recordEntry(entry: HrTimeOffEntry, key: string, causationId?: string): Promise<void>;
}>;

export const createHrFacts = (
  deps: Readonly<{ dispatch: Dispatch; readModel: TimeOffReadModel; clock: Clock; logger: Logger }>,
): HrFacts => {
  const { readModel, clock, logger } = deps;

  const command = (type: string, data: object, key: string, causationId?: string): Command => ({
    type,
    data: data as JsonObject,
    metadata: {
      now: clock.now().toISOString(),
      commandId: uuidv5(`${TIME_OFF_HR_READS_PROCESSOR}:${key}`),
      actor: ACTOR,
      ...(causationId ? { causationId } : {}),
    },
  });

  const record = async (c: Command): Promise<void> => {
    const r = await dispatchCommand(deps.dispatch, c);
    if (r.outcome === 'rejected')
      logger.warn({ code: r.code, commandType: c.type }, `not recorded: ${r.message}`);
  };

  /**
   * One of ours: cancelled in HR's web app, or confirmed when its read-back is outstanding. Not
   * ours: a submission HR took whose id we have not found yet, for the same person and days.
   */
  const recordEntry = async (entry: HrTimeOffEntry, key: string, causationId?: string): Promise<void> => {
    await record(command('RecordHrTimeOff', { entry }, `${key}:entry`, causationId));
    await readModel.catchUp();
    const ours = readModel.requestOfHrId(entry.hrRequestId);
    if (ours) {
      if (entry.status === 'cancelled') {
        await record(
          command(
            'RecordTimeOffCancelledInHr',
            { timeOffId: ours.timeOffId, cancelRequestId: null },
            `${key}:cancelled`,
            causationId,
          ),
        );
        return;
      }
      const state = readModel.state(ours.timeOffId);
      const readBackRequestId = state?.context.readBackRequestId ?? null;
      if (ours.phase === 'submitted' && readBackRequestId !== null) {
        await record(
          command(
            'RecordTimeOffReadBack',
            { timeOffId: ours.timeOffId, readBackRequestId, hrStatus: entry.status },
            `${key}:readback`,
            causationId,
          ),
        );
      }
      return;
    }
    if (entry.status === 'cancelled') return;
    const match = { policyType: entry.policyType, startDate: entry.startDate, endDate: entry.endDate };
    for (const view of readModel.awaitingHrId(entry.employeeId, match)) {
      const sent = readModel.state(view.timeOffId)?.context.submissionSent ?? null;
      // Only a submission HR took: an approved request not posted yet is not matched to a request
      // someone made in the HR web app for the same days.
      if (!sent) continue;
      await record(
        command(
          'RecordTimeOffSubmitted',
          {
            timeOffId: view.timeOffId,
            submitRequestId: sent.submitRequestId,
            hrRequestId: entry.hrRequestId,
          },
          `${key}:submitted:${view.timeOffId}`,
          causationId,
        ),
      );
      return;
    }
  };

  return { command, record, recordEntry };
};
