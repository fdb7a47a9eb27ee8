import { z } from 'zod';
import { MAX_STATUS_UPDATE } from '../../machines/incident/statusUpdates.ts';
import { INCIDENT_USAGE, ONCALL_COVER_USAGE, ONCALL_USAGE } from '../../src/incidents/blocks/incidentHelp.ts';
import { MAX_NOTE, MAX_TITLE } from '../../src/incidents/blocks/incidentModals.ts';
import { escapeMrkdwn as esc } from '../../src/slack/blocks/format.ts';

/**
 * `/incident` and `/oncall` text → what the user asked for, or what was wrong with it (with the
 * usage of that subcommand). Slack sends mentions escaped (`<@U123|ana>`; manifest
 * `should_escape: true`). Errors are mrkdwn: whatever the user typed is escaped in them (`&`, `<`,
 * `>`), so it can neither mention nor link. Titles are bounded to MAX_TITLE (255) characters,
 * notes and resolutions to MAX_NOTE (3000), the same bounds as the forms.
 *
 * @example
 * parseIncidentText('ack 42'); // { sub: 'ack', ref: '42' }
 * parseIncidentText('escalate 42 two'); // { error: 'The level must be a number from 1 to 20, not “two”.', usage: … }
 */
export type IncidentRequest =
  | Readonly<{ sub: 'help' }>
  | Readonly<{ sub: 'trigger'; form: true }>
  | Readonly<{
      sub: 'trigger';
      form: false;
      serviceQuery: string | null;
      serviceAndTitle: string | null;
      title: string;
    }>
  | Readonly<{ sub: 'list'; service: string | null }>
  | Readonly<{ sub: 'show' | 'ack' | 'timeline' | 'channel'; ref: string }>
  | Readonly<{ sub: 'resolve'; ref: string; resolution: string | null }>
  | Readonly<{ sub: 'escalate'; ref: string; level: number | null }>
  | Readonly<{ sub: 'note'; ref: string; content: string | null }>
  | Readonly<{ sub: 'reassign'; ref: string; users: readonly string[] }>
  | Readonly<{ sub: 'priority'; ref: string; priority: string }>
  | Readonly<{ sub: 'urgency'; ref: string; urgency: 'high' | 'low' }>
  /** `/incident ack mine`: every triggered incident assigned to the asker. */
  | Readonly<{ sub: 'ackMine' }>
  /** `/incident resolve 41 42 43`: several incidents, no resolution text. */
  | Readonly<{ sub: 'resolveMany'; refs: readonly string[] }>
  | Readonly<{
      sub: 'subscribe' | 'unsubscribe';
      service: string | null;
      /** Issue 22 item 3: `… stakeholders` (the service's status updates, not its cards). */
      stakeholders?: boolean;
    }>
  /** Issue 22 item 3: a status update for stakeholders; `text` null opens the form. */
  | Readonly<{ sub: 'update'; ref: string; text: string | null }>;

export type ParseProblem = Readonly<{ error: string; usage: string }>;

export const UNSUBSCRIBE_USAGE = '/incident unsubscribe <service> [stakeholders]';

const refSchema = z
  .string()
  .regex(/^(#?\d{1,9}|[A-Za-z0-9]{2,40}|incident-[A-Za-z0-9-]{1,80})$/, 'is not an incident number or id');
const levelSchema = z.coerce.number().int().min(1).max(20);
const MENTION = /^<@([UW][A-Z0-9]{2,})(?:\|[^>]*)?>$/;

const ALIASES: Readonly<Record<string, string>> = {
  acknowledge: 'ack',
  new: 'trigger',
  declare: 'trigger',
  ls: 'list',
  get: 'show',
  close: 'resolve',
  history: 'timeline',
  '': 'help',
};

/** Room left for the service's name in `/incident trigger <service> <title>`. */
const SERVICE_NAME_ROOM = 100;

const tooLong = (what: string, length: number, max: number, usage: string): ParseProblem => ({
  error: `That ${what} is ${length} characters long; keep it to ${max}${what === 'title' ? ' and put the rest in a note' : ', or split it into several notes'}.`,
  usage,
});

/** Incidents one `/incident resolve <n> <n>…` may name (the bulk route chunks them further). */
export const MAX_BULK_REFS = 100;
/** A priority's name as typed (the vendor's names are short: P1…P5, SEV-1). */
const MAX_PRIORITY_NAME = 100;

const words = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);

/** The text after the first `n` words, spacing kept. */
const after = (text: string, n: number): string => {
  let rest = text.trim();
  for (let i = 0; i < n; i++) rest = rest.replace(/^\S+\s*/, '');
  return rest.trim();
};

export const parseIncidentText = (text: string): IncidentRequest | ParseProblem => {
  const w = words(text);
  const first = (w[0] ?? '').toLowerCase();
  const sub = ALIASES[first] ?? first;
  const usage = (k: keyof typeof INCIDENT_USAGE) => INCIDENT_USAGE[k];
  const needRef = (k: keyof typeof INCIDENT_USAGE): string | ParseProblem => {
    const raw = w[1];
    if (raw === undefined)
      return { error: `Which incident? Give its number, e.g. \`/incident ${k} 42\`.`, usage: usage(k) };
    const parsed = refSchema.safeParse(raw);
    if (!parsed.success)
      return {
        error: `“${esc(raw)}” ${parsed.error.issues[0]?.message ?? 'is not valid'}.`,
        usage: usage(k),
      };
    return parsed.data.replace(/^#/, '');
  };
  const oneRef = (k: 'show' | 'ack' | 'timeline' | 'channel'): IncidentRequest | ParseProblem => {
    const ref = needRef(k);
    if (typeof ref !== 'string') return ref;
    if (w.length > 2) return { error: `\`${k}\` takes only the incident.`, usage: usage(k) };
    return { sub: k, ref };
  };
  switch (sub) {
    case 'help':
      return { sub: 'help' };
    case 'trigger': {
      const rest = after(text, 1);
      if (rest === '') return { sub: 'trigger', form: true };
      const quoted = /^["“]([^"”]+)["”]\s*(.*)$/.exec(rest);
      if (quoted) {
        const title = (quoted[2] ?? '').trim();
        if (title === '')
          return { error: 'Say what is broken after the service name.', usage: usage('trigger') };
        if (title.length > MAX_TITLE) return tooLong('title', title.length, MAX_TITLE, usage('trigger'));
        return { sub: 'trigger', form: false, serviceQuery: quoted[1]!.trim(), serviceAndTitle: null, title };
      }
      if (words(rest).length < 2) {
        return {
          // Built from what they typed: a fixed example names a service their account may not have.
          error: `Give a service and a title: \`/incident trigger ${esc(rest)} &lt;what is broken&gt;\`, or \`/incident trigger\` alone to pick the service in a form.`,
          usage: usage('trigger'),
        };
      }
      // The service's name is at most a few words: a longer text is a title over the bound anyway.
      if (rest.length > MAX_TITLE + SERVICE_NAME_ROOM)
        return tooLong('title', rest.length, MAX_TITLE, usage('trigger'));
      return { sub: 'trigger', form: false, serviceQuery: null, serviceAndTitle: rest, title: '' };
    }
    case 'list': {
      const service = after(text, 1);
      return { sub: 'list', service: service === '' ? null : service };
    }
    case 'ack':
      if ((w[1] ?? '').toLowerCase() === 'mine') {
        if (w.length > 2) return { error: '`ack mine` takes nothing more.', usage: usage('ackMine') };
        return { sub: 'ackMine' };
      }
      return oneRef('ack');
    case 'show':
    case 'timeline':
    case 'channel':
      return oneRef(sub);
    case 'resolve': {
      // Only incident numbers after `resolve`, two or more: each of them (a resolution is words).
      const rest = w.slice(1);
      if (rest.length >= 2 && rest.every((x) => /^#?\d{1,9}$/.test(x))) {
        const refs = [...new Set(rest.map((x) => x.replace(/^#/, '')))];
        if (refs.length > MAX_BULK_REFS) {
          return {
            error: `That is ${refs.length} incidents; give at most ${MAX_BULK_REFS} at a time.`,
            usage: usage('resolveMany'),
          };
        }
        return { sub: 'resolveMany', refs };
      }
      const ref = needRef('resolve');
      if (typeof ref !== 'string') return ref;
      const resolution = after(text, 2);
      if (resolution.length > MAX_NOTE)
        return tooLong('resolution', resolution.length, MAX_NOTE, usage('resolve'));
      return { sub: 'resolve', ref, resolution: resolution === '' ? null : resolution };
    }
    case 'escalate': {
      const ref = needRef('escalate');
      if (typeof ref !== 'string') return ref;
      if (w.length > 3)
        return { error: 'Give the incident and, optionally, the level.', usage: usage('escalate') };
      if (w[2] === undefined) return { sub: 'escalate', ref, level: null };
      const level = levelSchema.safeParse(w[2]);
      if (!level.success)
        return {
          error: `The level must be a number from 1 to 20, not “${esc(w[2])}”.`,
          usage: usage('escalate'),
        };
      return { sub: 'escalate', ref, level: level.data };
    }
    case 'note': {
      const ref = needRef('note');
      if (typeof ref !== 'string') return ref;
      const content = after(text, 2);
      if (content.length > MAX_NOTE) return tooLong('note', content.length, MAX_NOTE, usage('note'));
      return { sub: 'note', ref, content: content === '' ? null : content };
    }
    case 'reassign': {
      const ref = needRef('reassign');
      if (typeof ref !== 'string') return ref;
      const users: string[] = [];
      for (const word of w.slice(2)) {
        const m = MENTION.exec(word);
        if (!m) {
          return {
            error: `“${esc(word)}” is not a Slack user: type @ and pick the person from the list.`,
            usage: usage('reassign'),
          };
        }
        if (!users.includes(m[1]!)) users.push(m[1]!);
      }
      return { sub: 'reassign', ref, users };
    }
    case 'priority': {
      const ref = needRef('priority');
      if (typeof ref !== 'string') return ref;
      const priority = after(text, 2);
      if (priority === '') {
        return {
          error:
            'Which priority? Give its name as the incident service shows it, e.g. `/incident priority 42 P1`.',
          usage: usage('priority'),
        };
      }
      if (priority.length > MAX_PRIORITY_NAME) {
        return {
          error: `“${esc(priority.slice(0, 40))}…” is too long for a priority name.`,
          usage: usage('priority'),
        };
      }
      return { sub: 'priority', ref, priority };
    }
    case 'urgency': {
      const ref = needRef('urgency');
      if (typeof ref !== 'string') return ref;
      const given = (w[2] ?? '').toLowerCase();
      if (w.length > 3 || (given !== 'high' && given !== 'low')) {
        return {
          error:
            w[2] === undefined
              ? 'High or low? e.g. `/incident urgency 42 low`.'
              : `The urgency is high or low, not “${esc(after(text, 2))}”.`,
          usage: usage('urgency'),
        };
      }
      return { sub: 'urgency', ref, urgency: given };
    }
    case 'subscribe':
    case 'unsubscribe': {
      const typed = after(text, 1);
      // `/incident subscribe Payments API stakeholders`: the last word says which kind.
      const stakeholders = /(^|\s)stakeholders$/i.test(typed);
      const service = stakeholders ? typed.replace(/\s*stakeholders$/i, '').trim() : typed;
      return { sub, service: service === '' ? null : service, ...(stakeholders ? { stakeholders } : {}) };
    }
    case 'update': {
      const ref = needRef('update');
      if (typeof ref !== 'string') return ref;
      const update = after(text, 2);
      if (update.length > MAX_STATUS_UPDATE) {
        return {
          error: `That update is ${update.length} characters long; keep it to ${MAX_STATUS_UPDATE}.`,
          usage: usage('update'),
        };
      }
      return { sub: 'update', ref, text: update === '' ? null : update };
    }
    default:
      return {
        error: `\`/incident ${esc(first)}\` is not something Switchboard knows.`,
        usage: Object.values(INCIDENT_USAGE).join('\n'),
      };
  }
};

export type OnCallRequest =
  | Readonly<{ kind: 'help' }>
  | Readonly<{ kind: 'everyone' }>
  | Readonly<{ kind: 'user'; slackUserId: string }>
  | Readonly<{ kind: 'text'; text: string }>
  /** Issue 20: `/oncall cover [day [to day]]`: ask for cover of your own shifts then. */
  | Readonly<{ kind: 'cover'; from: string | null; to: string | null }>;

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
const realDay = (d: string): boolean => {
  const at = Date.parse(`${d}T00:00:00Z`);
  return ISO_DAY.test(d) && !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === d;
};

const parseCover = (rest: string): OnCallRequest | ParseProblem => {
  const words = rest.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return { kind: 'cover', from: null, to: null };
  const [from, sep, to, ...more] = words;
  const bad = (why: string): ParseProblem => ({ error: why, usage: ONCALL_COVER_USAGE });
  if (!from || !realDay(from)) return bad(`“${esc(truncateWord(from ?? ''))}” is not a day: use YYYY-MM-DD.`);
  if (sep === undefined) return { kind: 'cover', from, to: from };
  if (sep.toLowerCase() !== 'to' || !to || more.length > 0)
    return bad('Give one day, or two with “to” between.');
  if (!realDay(to)) return bad(`“${esc(truncateWord(to))}” is not a day: use YYYY-MM-DD.`);
  if (to < from) return bad('The last day is before the first.');
  return { kind: 'cover', from, to };
};
const truncateWord = (w: string): string => (w.length > 40 ? `${w.slice(0, 40)}…` : w);

export const parseOnCallText = (text: string): OnCallRequest | ParseProblem => {
  const t = text.trim();
  if (t === '') return { kind: 'everyone' };
  if (t.toLowerCase() === 'help') return { kind: 'help' };
  const cover = /^cover(?:\s+(.*))?$/is.exec(t);
  if (cover) return parseCover(cover[1] ?? '');
  const m = MENTION.exec(t);
  if (m) return { kind: 'user', slackUserId: m[1]! };
  if (t.startsWith('<@') || t.startsWith('@')) {
    return {
      error: `“${esc(t)}” is not a Slack user: type @ and pick the person from the list.`,
      usage: ONCALL_USAGE,
    };
  }
  if (t.length > 100)
    return { error: 'That is too long for a service or schedule name.', usage: ONCALL_USAGE };
  return { kind: 'text', text: t };
};
