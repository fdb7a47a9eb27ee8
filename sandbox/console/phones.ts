import type { VonageSimulator } from '../simulators/vonage/index.ts';

/**
 * What the console needs from the sandbox's phones: each person's handset on the communications
 * simulator, seen from the person holding it. The console shows one phone (the person you are
 * playing): its SMS inbox and a reply box, and its calls (ringing → answered → what the call says
 * → keys pressed and the call's next instructions → ended). `sandbox.ts` adapts the simulator to
 * this shape, so the console knows no vendor's API.
 *
 * Everything the page sends is checked here before it reaches a phone: {@link parseSmsText},
 * {@link parseDigits}, {@link parseCallAction}. A refusal names what was wrong.
 */

export type PhoneSms = Readonly<{
  id: string;
  /** `received`: it arrived on this phone; `sent`: the person typed it on this phone. */
  direction: 'received' | 'sent';
  /** The other end's number, E.164 with `+`. */
  peer: string;
  text: string;
  /** ISO time. */
  at: string;
}>;

export type PhoneKeyPress = Readonly<{
  digits: string;
  at: string;
  /** The instructions (NCCO) the bot answered the keys with, as sent; null while it has not answered. */
  answer: readonly unknown[] | null;
}>;

export type PhoneCall = Readonly<{
  id: string;
  /** Who is calling, E.164 with `+`. */
  from: string;
  /** `ringing`, `answered`, `completed`, `rejected`, `unanswered`, `busy`, `failed`, … */
  status: string;
  startedAt: string;
  /** What the call says, in order. */
  spoken: readonly string[];
  /** True while the call waits for keys (its current instructions end with an input). */
  awaitingKeys: boolean;
  keys: readonly PhoneKeyPress[];
}>;

export type PhoneView = Readonly<{ sms: readonly PhoneSms[]; calls: readonly PhoneCall[] }>;

export type CallAction = 'answer' | 'reject' | 'hangup' | 'press';

export type SandboxPhones = Readonly<{
  /** One number's handset: newest last. */
  view(number: string): PhoneView;
  /** The person texts Switchboard from their phone (an inbound SMS to the bot's number). */
  sendSms(from: string, text: string): Promise<void>;
  /** Acts on a call ringing or answered on `number`; refuses a call that is not that phone's. */
  callAction(number: string, callId: string, action: CallAction, digits?: string): Promise<void>;
  /** Calls `listener` with a number whenever its handset changes; returns the unsubscribe. */
  onChange(listener: (number: string) => void): () => void;
}>;

/**
 * A phone-side refusal, with the message the person sees: 400 for bad input, 409 for a call that
 * cannot do that now (answering a call that stopped ringing).
 */
export class PhoneInputError extends Error {
  readonly status: 400 | 404 | 409;
  constructor(message: string, status: 400 | 404 | 409 = 400) {
    super(message);
    this.name = 'PhoneInputError';
    this.status = status;
  }
}

/** Longest SMS the phone sends: ten concatenated 160-character segments. */
export const MAX_SMS_TEXT = 1_600;

export const parseSmsText = (raw: unknown): string => {
  if (typeof raw !== 'string') throw new PhoneInputError('text must be a string');
  const text = raw.trim();
  if (text === '') throw new PhoneInputError('type a message first: the text is empty');
  if (text.length > MAX_SMS_TEXT)
    throw new PhoneInputError(`the text is ${text.length} characters; a phone sends at most ${MAX_SMS_TEXT}`);
  return text;
};

/** Keypad keys: 0–9, `*` and `#`, one to twenty of them. */
export const parseDigits = (raw: unknown): string => {
  if (typeof raw !== 'string' || raw === '') throw new PhoneInputError('digits are required (0–9, * or #)');
  if (!/^[0-9*#]{1,20}$/.test(raw))
    throw new PhoneInputError('digits must be keypad keys: 0–9, * or #, at most 20 of them');
  return raw;
};

const ACTIONS: readonly CallAction[] = ['answer', 'reject', 'hangup', 'press'];

export const parseCallAction = (raw: unknown): CallAction => {
  if (typeof raw === 'string' && (ACTIONS as readonly string[]).includes(raw)) return raw as CallAction;
  throw new PhoneInputError(`action must be one of ${ACTIONS.join(', ')}`);
};

/** The communications simulator's phone hooks this adapter uses (`sandbox/simulators/vonage/`). */
type SimPhones = Pick<
  VonageSimulator['phones'],
  'inbox' | 'sent' | 'calls' | 'replySms' | 'answer' | 'pressKeys' | 'hangUp' | 'onChange'
>;

const plus = (digits: string): string => (digits.startsWith('+') ? digits : `+${digits}`);

/**
 * The console's phones on the communications simulator's `phones` hooks, numbers with `+` (the
 * simulator's have none). Changes come from the simulator's `phones.onChange`, and from here for
 * what only this adapter knows: it remembers which NCCO answered each key press (the simulator
 * keeps only the one playing) and which ringing calls the person declined.
 */
export const simulatorPhones = (sim: Readonly<{ phones: SimPhones }>): SandboxPhones & { stop(): void } => {
  const listeners = new Set<(number: string) => void>();
  const answers = new Map<string, PhoneKeyPress[]>();
  const declined = new Set<string>();
  const bare = (n: string) => n.replace(/^\+/, '');

  const view = (number: string): PhoneView => {
    const n = bare(number);
    const sms: PhoneSms[] = [
      ...sim.phones.inbox(n).map(
        (m): PhoneSms => ({
          id: m.messageUuid,
          direction: 'received',
          peer: plus(m.from),
          text: m.text,
          at: m.at,
        }),
      ),
      ...sim.phones.sent(n).map(
        (m): PhoneSms => ({
          id: m.messageUuid,
          direction: 'sent',
          peer: plus(m.to),
          text: m.text,
          at: m.at,
        }),
      ),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const calls = sim.phones.calls(n).map((c): PhoneCall => {
      const known = answers.get(c.uuid) ?? [];
      // Keys pressed elsewhere (a test on the simulator): the last one's answer is what plays now.
      const keys = c.keys.map(
        (digits, i): PhoneKeyPress =>
          known[i] ?? {
            digits,
            at: c.answeredAt ?? c.at,
            answer: i === c.keys.length - 1 ? c.ncco : null,
          },
      );
      return {
        id: c.uuid,
        from: plus(c.from),
        status: declined.has(c.uuid) ? 'rejected' : c.status,
        startedAt: c.at,
        spoken: [...c.spoken],
        awaitingKeys: c.status === 'answered' && c.awaitingInput !== undefined,
        keys,
      };
    });
    return { sms, calls };
  };

  const changed = (number: string) => {
    for (const l of listeners) l(plus(number));
  };
  const off = sim.phones.onChange(changed);

  const callOf = (number: string, callId: string) => {
    const call = sim.phones.calls(bare(number)).find((c) => c.uuid === callId);
    if (!call) throw new PhoneInputError('no such call on this phone', 404);
    return call;
  };

  return {
    view,
    async sendSms(from, text) {
      // The text has left the phone; the service delivers it to Switchboard (and retries) on its own.
      void sim.phones.replySms(bare(from), text);
    },
    async callAction(number, callId, action, digits) {
      const call = callOf(number, callId);
      const shown = declined.has(callId) ? 'rejected' : call.status;
      if (action === 'answer' || action === 'reject') {
        if (call.status !== 'ringing') throw new PhoneInputError(`the call is ${shown}, not ringing`, 409);
        if (action === 'answer') sim.phones.answer(callId);
        else {
          declined.add(callId);
          sim.phones.hangUp(callId);
        }
      } else if (action === 'hangup') {
        if (call.status === 'ringing')
          throw new PhoneInputError('the call is still ringing: answer or decline it', 409);
        if (call.status !== 'answered')
          throw new PhoneInputError(`the call has already ended (${shown})`, 409);
        sim.phones.hangUp(callId);
      } else {
        if (call.status !== 'answered' || call.awaitingInput === undefined)
          throw new PhoneInputError('the call is not waiting for keys', 409);
        const keys = parseDigits(digits);
        const at = new Date().toISOString();
        const list = answers.get(callId) ?? [];
        answers.set(callId, list);
        const index = call.keys.length;
        list[index] = { digits: keys, at, answer: null };
        const result = await sim.phones.pressKeys(callId, keys);
        list[index] = { digits: keys, at, answer: Array.isArray(result.ncco) ? result.ncco : [] };
        changed(number); // the answer is known here, after the simulator played it
      }
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      off();
      listeners.clear();
    },
  };
};
