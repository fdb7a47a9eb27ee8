/**
 * On-call arithmetic for the simulator: rotations rendered for a time range, overrides on top,
 * and on-calls derived from escalation policies. Times are epoch milliseconds internally and ISO
 * 8601 UTC (`…Z`) on the wire.
 */

export type SimScheduleLayer = {
  readonly id: string;
  readonly name: string;
  /** When the layer takes effect. */
  readonly start: string;
  /** Anchor of the rotation: the first user's turn starts here (may be before `start`). */
  readonly rotationVirtualStart: string;
  readonly rotationTurnLengthSeconds: number;
  readonly userIds: readonly string[];
  readonly end?: string | null;
};

export type SimOverride = {
  readonly id: string;
  readonly start: string;
  readonly end: string;
  readonly userId: string;
  /** Later overrides win where they overlap. */
  readonly seq: number;
};

export type SimSchedule = {
  readonly id: string;
  name: string;
  timeZone: string;
  description: string;
  /** Later layers win where they overlap (the top layer in the web app). */
  layers: SimScheduleLayer[];
  overrides: SimOverride[];
  teamIds: string[];
};

export type RenderedEntry = { readonly start: number; readonly end: number; readonly userId: string };

const mod = (a: number, n: number) => ((a % n) + n) % n;

/** One layer's turns overlapping [since, until), clipped to that window. */
export const renderLayer = (layer: SimScheduleLayer, since: number, until: number): RenderedEntry[] => {
  const n = layer.userIds.length;
  const turn = layer.rotationTurnLengthSeconds * 1000;
  if (n === 0 || turn <= 0) return [];
  const from = Math.max(since, Date.parse(layer.start));
  const to = Math.min(until, layer.end ? Date.parse(layer.end) : Number.POSITIVE_INFINITY);
  if (from >= to) return [];
  const anchor = Date.parse(layer.rotationVirtualStart);
  const out: RenderedEntry[] = [];
  for (let k = Math.floor((from - anchor) / turn); anchor + k * turn < to; k++) {
    const s = Math.max(anchor + k * turn, from);
    const e = Math.min(anchor + (k + 1) * turn, to);
    if (e > s) out.push({ start: s, end: e, userId: layer.userIds[mod(k, n)]! });
  }
  return out;
};

/** The final schedule: overrides over layers, adjacent turns of the same user merged. */
export const renderFinal = (schedule: SimSchedule, since: number, until: number): RenderedEntry[] => {
  if (until <= since) return [];
  const layerEntries = schedule.layers.map((l) => renderLayer(l, since, until));
  const overrides = schedule.overrides
    .map((o) => ({ start: Math.max(Date.parse(o.start), since), end: Math.min(Date.parse(o.end), until), o }))
    .filter((x) => x.end > x.start);
  const cuts = new Set<number>([since, until]);
  for (const list of layerEntries) for (const e of list) cuts.add(e.start).add(e.end);
  for (const x of overrides) cuts.add(x.start).add(x.end);
  const points = [...cuts].filter((t) => t >= since && t <= until).sort((a, b) => a - b);
  const out: RenderedEntry[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    let userId: string | undefined;
    let bestSeq = -1;
    for (const x of overrides) {
      if (x.start <= a && a < x.end && x.o.seq > bestSeq) {
        userId = x.o.userId;
        bestSeq = x.o.seq;
      }
    }
    if (userId === undefined) {
      for (let l = layerEntries.length - 1; l >= 0 && userId === undefined; l--) {
        userId = layerEntries[l]!.find((e) => e.start <= a && a < e.end)?.userId;
      }
    }
    if (userId === undefined) continue;
    const last = out[out.length - 1];
    if (last && last.userId === userId && last.end === a) out[out.length - 1] = { ...last, end: b };
    else out.push({ start: a, end: b, userId });
  }
  return out;
};

/** Who is on the schedule at one instant. */
export const onCallAt = (schedule: SimSchedule, at: number): string | undefined =>
  renderFinal(schedule, at, at + 1)[0]?.userId;

/**
 * Shifts overlapping [since, until] with their real (unclipped) bounds, as `GET /oncalls` reports
 * them. Shifts are looked up within `horizonMs` around the window.
 */
export const shiftsOverlapping = (
  schedule: SimSchedule,
  since: number,
  until: number,
  horizonMs = 35 * 24 * 3600 * 1000,
): RenderedEntry[] => {
  const entries = renderFinal(schedule, since - horizonMs, Math.max(until, since + 1) + horizonMs);
  return entries.filter((e) => e.start <= Math.max(until, since) && e.end > since);
};

const HOUR_MS = 3600 * 1000;

/**
 * Where a demo rotation starts, given the clock the simulator runs on: the top of the hour two
 * hours before `now`. Rotations anchored here have their first user on call at `now` with the
 * next handoff at least 22 hours away (daily) or 6 days 22 hours away (weekly), whatever the
 * day or hour a test or the sandbox starts, so nothing depends on the calendar.
 */
export const rotationAnchor = (now: Date): string =>
  iso(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 2 * HOUR_MS);

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/** "Weekly rotation, handoff Monday 09:00 UTC" for a layer anchored at `anchor`. */
export const rotationDescription = (anchor: string, turn: 'daily' | 'weekly'): string => {
  const at = new Date(anchor);
  const time = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')} UTC`;
  return turn === 'weekly'
    ? `Weekly rotation, handoff ${WEEKDAYS[at.getUTCDay()]} ${time}`
    : `Daily rotation, handoff ${time}`;
};

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
