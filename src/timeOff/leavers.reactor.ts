import { coverAskStreamId } from '../../machines/timeOff/coverAsk.ts';
import { employeeById } from '../../machines/timeOff/directory.ts';
import { TIME_OFF_DIRECTORY_STREAM } from '../../machines/timeOff/streams.ts';
import { ConcurrencyError, hasCode } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { OnCallShift, PortDirectory, RotaRef } from '../lifecycles/ports.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { NOTICE_METADATA_EVENT_TYPE, type OutboxLedger, type SlackOutbox } from '../slack/outbox.ts';
import { truncate } from '../slack/text.ts';
import { type LeaverShiftCovers, leaverReportMessage } from './blocks/leaverReport.ts';
import { readCoverAsk } from './coverAsk.reactor.ts';
import { coverAskIdFor, openCoverAskCommand } from './coverAskIds.ts';
import {
  foldLeaver,
  type LeaverIncident,
  type LeaverPolicy,
  type LeaverReport,
  type LeaverShift,
  leaverStreamId,
  parseLeaverHrId,
} from './leavers.events.ts';
import type { TimeOffPeople } from './people.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

export const LEAVERS_PROCESSOR = 'timeoff-leavers';
const DAY_MS = 24 * 60 * 60_000;
/** How far ahead shifts are looked up (the incident service publishes 90 days). */
export const LEAVER_HORIZON_MS = 90 * DAY_MS;
/** A leaver fact older than this when first handled (a new deployment reading history) is not posted. */
const REPORT_FRESH_MS = 7 * DAY_MS;

export type LeaversDeps = Readonly<{
  ports: PortDirectory;
  people: Pick<TimeOffPeople, 'slackUserOfEmployee'>;
  readModel: Pick<TimeOffReadModel, 'catchUp' | 'directory'>;
  /** Posts each channel's part once (recorded as `LeaverReportPosted`). */
  outbox: SlackOutbox;
  /** Issue 20: opens one cover ask per reported shift (its Cover… button takes it; the first cover wins). */
  dispatch?: Dispatch;
}>;

/**
 * Where a leaver's report parts are recorded, as they always were: `LeaverReportPosted { hrId,
 * channel, ts, at }` in the leaver's stream, one per channel (keys are the channels).
 */
const leaverReportLedger = (hrId: string): OutboxLedger => {
  const streamId = leaverStreamId(hrId);
  return {
    name: `${LEAVERS_PROCESSOR}:${hrId}`,
    async find(ctx, channel) {
      const { posted, postedTs } = foldLeaver(await ctx.store.readStream(streamId));
      return posted.has(channel) ? { key: channel, channel, ts: postedTs.get(channel) || null } : null;
    },
    async record(ctx, channel, sent) {
      const at = ctx.now().toISOString();
      await ctx.store.appendToStream(streamId, [
        {
          id: uuidv5(`leaver:${hrId}:posted:${channel}`),
          type: 'LeaverReportPosted',
          data: { hrId, channel, ts: sent?.ts ?? '', at },
        },
      ]);
      return { key: channel, channel, ts: sent?.ts ?? null, at };
    },
    marker: (channel) => ({
      event_type: NOTICE_METADATA_EVENT_TYPE,
      event_payload: { record: `${streamId}:${channel}` },
    }),
  };
};

/** The recorded report of a leaver, or null (for the cover button's check). */
const readLeaverReport = async (store: EventStore, hrId: string): Promise<LeaverReport | null> =>
  foldLeaver(await store.readStream(leaverStreamId(hrId))).report;

const CHANNEL = /^[CG][A-Z0-9]{2,30}$/;

/** Issue 20: the ask of a reported shift (one per shift: every Cover… of it meets there). */
export const leaverShiftAskId = (hrId: string, shift: LeaverShift): string => {
  const { index, ...slot } = shift;
  return coverAskIdFor({ kind: 'leaver', hrId, index }, slot);
};

/** Who opens a leaver's asks (the report, for the leaver): a system actor. */
export const LEAVERS_ACTOR = `system:${LEAVERS_PROCESSOR}`;

/**
 * The ask of a reported shift, always the same content (so opening it again is nothing new): the
 * reactor opens it with the report; a Cover… form sends it again before taking it, for reports
 * posted before asks existed. Null when the leaver has no Slack user (no shifts then).
 */
export const leaverShiftOpenCommand = (
  report: LeaverReport,
  shift: LeaverShift,
  metadata: CommandMetadata,
): Command | null => {
  if (!report.slackUserId) return null;
  const { index, ...slot } = shift;
  return openCoverAskCommand(
    {
      slot,
      absent: { slackUserId: report.slackUserId, displayName: report.displayName },
      asked: [],
      anyone: true,
      announce: false,
      openedBy: report.slackUserId,
      notify: [],
      reason: { kind: 'leaver', hrId: report.hrId, index },
      now: new Date(report.at),
    },
    metadata,
  ).command;
};

/** Who covers each reported shift (from its ask), for the report's redraw. */
const coversOf = async (
  ctx: Pick<ProcessorContext, 'store'>,
  report: LeaverReport,
): Promise<LeaverShiftCovers> => {
  const covers = new Map<number, { cover: string; by: string } | { closed: 'expired' | 'cancelled' }>();
  for (const shift of report.shifts) {
    const state = await readCoverAsk(ctx, coverAskStreamId(leaverShiftAskId(report.hrId, shift)));
    if (state.status === 'taken' && state.taken) {
      covers.set(shift.index, { cover: state.taken.cover.slackUserId, by: state.taken.by });
    } else if (state.status === 'expired' || state.status === 'cancelled') {
      covers.set(shift.index, { closed: state.status });
    }
  }
  return covers;
};

/** Issue 20: each channel's part of a leaver's report redrawn in place (who covers each shift). */
export const redrawLeaverReport = async (
  deps: Readonly<{ outbox: SlackOutbox }>,
  ctx: ProcessorContext,
  hrId: string,
): Promise<void> => {
  const { report, posted } = foldLeaver(await ctx.store.readStream(leaverStreamId(hrId)));
  if (!report) return;
  const covers = await coversOf(ctx, report);
  const ledger = leaverReportLedger(hrId);
  for (const part of report.channels) {
    if (!posted.has(part.channel)) continue;
    const result = await deps.outbox.update(
      ctx,
      { ledger, key: part.channel },
      leaverReportMessage(report, part, covers),
    );
    if (result.outcome === 'gone') ctx.logger.info({ hrId }, 'a leaver report is gone: not redrawn');
  }
};

/**
 * The shift a Cover… click (or its form) names, checked against what Switchboard recorded: the
 * leaver's report must exist, hold that shift, and have posted it in `channel`. Everything given
 * is hostile (the button's value, the form's metadata); the answer is the recorded shift, or why
 * not in words.
 */
export const reportedShift = async (
  store: EventStore,
  raw: Readonly<{ hrId: unknown; index: unknown }> | null,
  channel: unknown,
): Promise<Readonly<{ report: LeaverReport; shift: LeaverShift; channel: string }> | string> => {
  const hrId = parseLeaverHrId(raw?.hrId);
  const index = raw?.index;
  if (hrId === null || typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
    return 'the value names no leaver shift';
  }
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) return 'no channel to check the report against';
  const report = await readLeaverReport(store, hrId);
  const shift = report?.shifts.find((s) => s.index === index);
  if (!report || !shift) return 'no such leaver report or shift';
  const part = report.channels.find((c) => c.channel === channel);
  if (!part?.shifts.includes(index)) return 'the shift was not reported in this channel';
  return { report, shift, channel };
};

const rotaKey = (r: RotaRef): string =>
  'scheduleId' in r ? `schedule:${r.scheduleId}` : `policy:${r.escalationPolicyId}`;

/**
 * `timeoff-leavers` (issue 12, capability 3, with slice j-approvers handing on their approvals):
 * when HR says someone left (`DirectoryEmployeeLeft`), once per leaver:
 *
 * 1. their phone is forgotten (the `pager` port's `forget`, when verification is on): every page to
 *    them stops and the number becomes unreadable in the store;
 * 2. their upcoming on-call shifts (now → 90 days) and the escalation policies naming them are
 *    looked up (`onCall.shiftsOf`, `onCall.policiesNaming`) and, with the channels subscribed to
 *    each affected rota (`onCall.channelsFor`), recorded as `LeaverReportPrepared`;
 * 3. each channel gets its part of the report (`LeaverReportPosted`, checked first): the shifts with
 *    a Cover… button each, the policies to edit in the incident service. A rota no channel is
 *    subscribed to is said in the logs; nobody is DMed.
 *
 * A lookup that fails for a reason that passes (the service unreachable) is retried by the runner;
 * one that cannot succeed (the person has no incident-service user, on-call lookups switched off) is
 * recorded as what the report could not say.
 */
export const createLeaversReactor = (deps: LeaversDeps): Processor => ({
  id: LEAVERS_PROCESSOR,
  filter: { streamPrefixes: [TIME_OFF_DIRECTORY_STREAM], eventTypes: ['DirectoryEmployeeLeft'] },
  async handle(event, ctx) {
    if (event.kind !== 'event' || event.streamId !== TIME_OFF_DIRECTORY_STREAM) return;
    const hrId = String((event.data as { hrId?: unknown }).hrId ?? '');
    const leftAt = String((event.data as { at?: unknown }).at ?? event.recordedAt.toISOString());
    const streamId = leaverStreamId(hrId);
    const log = ctx.logger.child({ hrId });

    let { report, posted } = foldLeaver(await ctx.store.readStream(streamId));
    if (!report) {
      const prepared = await prepare(deps, hrId, ctx.now(), log);
      try {
        await ctx.store.appendToStream(
          streamId,
          [
            {
              id: uuidv5(`leaver:${hrId}:prepared`),
              type: 'LeaverReportPrepared',
              data: prepared as unknown as JsonObject,
            },
          ],
          { expectedRevision: 'no_stream' },
        );
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e;
      }
      ({ report, posted } = foldLeaver(await ctx.store.readStream(streamId)));
      if (!report) throw new Error(`the leaver report of ${hrId} was not recorded`);
    }
    if (ctx.now().getTime() - Date.parse(leftAt) > REPORT_FRESH_MS) {
      log.info('a leaver from more than a week ago: their phone is forgotten, no report is posted');
      return;
    }
    // Issue 20: one ask per shift, before its Cover… button is posted (the first cover wins there).
    if (deps.dispatch && report.slackUserId) {
      for (const shift of report.shifts) {
        const index = shift.index;
        const command = leaverShiftOpenCommand(report, shift, {
          now: ctx.now().toISOString(),
          commandId: uuidv5(`${LEAVERS_PROCESSOR}:ask:${hrId}:${index}`),
          actor: LEAVERS_ACTOR,
          causationId: event.id,
        });
        if (!command) continue;
        const outcome = await dispatchCommand(deps.dispatch, command);
        if (outcome.outcome === 'rejected')
          log.warn({ index }, `a leaver shift's ask was refused: ${outcome.message}`);
      }
    }
    const covers = await coversOf(ctx, report);
    const ledger = leaverReportLedger(hrId);
    for (const part of report.channels) {
      if (posted.has(part.channel)) continue;
      const result = await deps.outbox.post(ctx, {
        ledger,
        key: part.channel,
        channel: part.channel,
        message: leaverReportMessage(report, part, covers),
        since: event.recordedAt,
      });
      // Slack refused it for good: thrown, so the processor retries and then parks it, as before.
      if (result.outcome === 'refused') throw result.error;
    }
  },
});

const prepare = async (
  deps: LeaversDeps,
  hrId: string,
  now: Date,
  log: ProcessorLogger,
): Promise<LeaverReport> => {
  await deps.readModel.catchUp();
  const employee = employeeById(deps.readModel.directory(), hrId);
  const slackUserId = await deps.people.slackUserOfEmployee(hrId);
  const until = new Date(now.getTime() + LEAVER_HORIZON_MS);
  const base = {
    hrId,
    slackUserId,
    displayName: truncate(employee?.displayName ?? '', 200),
    phoneForgotten: false,
    shifts: [] as LeaverShift[],
    policies: [] as LeaverPolicy[],
    incidents: [] as LeaverIncident[],
    channels: [] as { channel: string; shifts: number[]; policies: string[]; incidents: number[] }[],
    unannounced: [] as string[],
    problems: [] as string[],
    until: until.toISOString(),
    at: now.toISOString(),
  };
  if (!slackUserId) {
    log.warn('a leaver with no Slack user: no phone to forget, no shifts to look up');
    return { ...base, problems: ['No Slack user has their email.'] };
  }
  const person = { slackUserId };

  const pager = deps.ports.get('pager');
  if (pager) {
    await pager.forget({ person, reason: 'left', at: now });
    base.phoneForgotten = true;
  }

  const onCall = deps.ports.get('onCall');
  if (!onCall) {
    log.info('incidents are switched off: no on-call shifts to report for a leaver');
    return { ...base, problems: ['Incidents are switched off: on-call shifts were not looked up.'] };
  }
  let shifts: readonly OnCallShift[] = [];
  let knownUntil = until;
  try {
    const found = await onCall.shiftsOf(person, { since: now, until });
    shifts = found.shifts;
    knownUntil = found.knownUntil;
  } catch (e) {
    if (!hasCode(e, 'SB_UNMAPPED_USER')) throw e;
    log.info('a leaver with no incident-service user: no shifts');
    return { ...base, problems: ['They have no user in the incident service.'] };
  }
  const mentions = await onCall.policiesNaming(person);

  // Shifts that can be covered: those of a schedule (an override), cut to what is known.
  const cut = (d: Date | null, fallback: Date) => (d === null ? fallback : d);
  const coverable: LeaverShift[] = [];
  for (const s of shifts) {
    if (!s.schedule) continue;
    const start = new Date(Math.max(cut(s.start, now).getTime(), now.getTime()));
    const end = new Date(Math.min(cut(s.end, knownUntil).getTime(), knownUntil.getTime()));
    if (end <= start) continue;
    const duplicate = coverable.some(
      (c) =>
        c.scheduleId === s.schedule?.id && c.start === start.toISOString() && c.end === end.toISOString(),
    );
    if (duplicate) continue; // the same turn reached through two policies
    coverable.push({
      index: coverable.length,
      scheduleId: s.schedule.id,
      scheduleName: s.schedule.name,
      escalationPolicyId: s.escalationPolicy.id,
      escalationPolicyName: s.escalationPolicy.name,
      level: s.level,
      start: start.toISOString(),
      end: end.toISOString(),
    });
    if (coverable.length >= 200) break;
  }
  const policies: LeaverPolicy[] = mentions
    .slice(0, 100)
    .map((m) => ({ id: m.id, name: m.name, level: m.level }));

  // Who hears about what: the channels of each schedule, and of each policy naming them.
  const byChannel = new Map<
    string,
    { channel: string; shifts: number[]; policies: string[]; incidents: number[] }
  >();
  const unannounced: string[] = [];
  const asked = new Map<string, readonly string[]>();
  const channelsOf = async (rota: RotaRef): Promise<readonly string[]> => {
    const key = rotaKey(rota);
    const known = asked.get(key);
    if (known) return known;
    const channels = await onCall.channelsFor(rota);
    asked.set(key, channels);
    return channels;
  };
  const part = (channel: string) => {
    let p = byChannel.get(channel);
    if (!p) {
      p = { channel, shifts: [], policies: [], incidents: [] };
      byChannel.set(channel, p);
    }
    return p;
  };
  for (const s of coverable) {
    const channels = await channelsOf({ scheduleId: s.scheduleId });
    if (channels.length === 0) unannounced.push(`schedule ${s.scheduleName ?? s.scheduleId}`);
    for (const c of channels) part(c).shifts.push(s.index);
  }
  for (const p of policies) {
    const channels = await channelsOf({ escalationPolicyId: p.id });
    if (channels.length === 0) unannounced.push(`escalation policy ${p.name ?? p.id}`);
    for (const c of channels) if (!part(c).policies.includes(p.id)) part(c).policies.push(p.id);
  }
  // Open incidents still assigned to them: said where their service's channel follows them.
  const incidents: LeaverIncident[] = [];
  for (const found of (await onCall.openIncidentsOf(person)).slice(0, 50)) {
    const index = incidents.length;
    incidents.push({ index, number: found.number, title: truncate(found.title, 300), status: found.status });
    if (found.channels.length === 0) unannounced.push(`incident #${found.number ?? '?'}`);
    for (const c of found.channels) part(c).incidents.push(index);
  }
  const uniqueUnannounced = [...new Set(unannounced)];
  if (uniqueUnannounced.length > 0) {
    log.warn(
      { rotas: uniqueUnannounced },
      'a leaver’s rota has no subscribed channel: its part of the report is not posted (`/incident subscribe` in a channel)',
    );
  }
  return {
    ...base,
    shifts: coverable,
    policies,
    incidents,
    channels: [...byChannel.values()].slice(0, 50),
    unannounced: uniqueUnannounced.slice(0, 200),
    until: knownUntil.toISOString(),
  };
};
