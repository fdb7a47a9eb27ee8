import {
  VERIFICATION_COUNTED_COMMANDS,
  VERIFICATION_USER_COMMANDS,
} from '../../machines/verification/commands.ts';
import { phaseOf } from '../../machines/verification/decider.ts';
import { verificationStreamId } from '../../machines/verification/streams.ts';
import { ValidationError } from '../../src/core/errors.ts';
import {
  defineLifecycle,
  type LifecycleDeps,
  type LifecycleInstance,
} from '../../src/lifecycles/lifecycle.ts';
import { createPersonKeys, type PersonKeys, preparePersonKeys } from '../../src/people/personKeys.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from '../../src/processors/retryPolicy.ts';
import type { SlackMessage } from '../../src/slack/blocks/format.ts';
import { slackDate } from '../../src/slack/time.ts';
import { createVonageClient } from '../../src/upstream/vonage.ts';
import type { VonageClient } from '../../src/upstream/vonageContract.ts';
import { vonageWebhookVerify } from '../../src/upstream/vonageSignature.ts';
import { VERIFICATION_SENSITIVE_ACTION_IDS } from '../../src/verification/blocks/ids.ts';
import { type CodeVault, createCodeVault } from '../../src/verification/codeVault.ts';
import { type VerificationConfig, verificationDeclaration } from '../../src/verification/config.ts';
import { createVerificationHomeSection } from '../../src/verification/home.ts';
import {
  createVerificationNoticesReactor,
  createVerificationPeopleReactor,
  createVerificationRemovalsReactor,
  createVerificationTimersReactor,
} from '../../src/verification/notices.reactor.ts';
import { PAGER_INDEX } from '../../src/verification/paging/pagerIndex.ts';
import { verificationParkedNotices } from '../../src/verification/parkedNotices.ts';
import { createPhoneSealer, type PhoneSealer } from '../../src/verification/phone.ts';
import {
  createVerificationReadModel,
  VERIFICATION_READ_MODEL,
  type VerificationReadModel,
} from '../../src/verification/readModel.projection.ts';
import { verificationRoutes } from '../../src/verification/routes.ts';
import { phoneStanding } from '../../src/verification/standing.ts';
import { readVerificationState } from '../../src/verification/state.ts';
import { createVerificationUpstreamReactor } from '../../src/verification/upstreamCalls.reactor.ts';
import { register as registerVerificationListeners } from './index.ts';
import { createPaging } from './pagingModule.ts';
import { verifyWebhookVerifier } from './webhooks.ts';

/**
 * The verification lifecycle (Vonage-shaped communications service): `/verify`, the code DM and
 * its modal, `POST /webhooks/vonage/verify`, its App Home section, and (from the paging slice) the
 * `pager` port. On when the VONAGE_* credentials are set.
 *
 * Where things are: rules in `machines/verification/`; the client wiring, reactors, read model and
 * Block Kit in `src/verification/`; the Slack and webhook edge here, with this module, which wires
 * them (and pagingModule.ts, paging's part).
 *
 * **The one-time code is never stored or logged in clear.** The modal's code input is one of the
 * module's `sensitiveActionIds`, so the recorded Slack input keeps `[Redacted]`. The listener
 * seals the code (AES-256-GCM) under a random key made for that one submission, held only in this
 * process's memory (`codeVault.ts`); the command and the `VerificationCodeSubmitted` fact carry
 * only the sealed value. The check processor opens it, calls the vendor, records only the outcome
 * (right, wrong with the tries left, ended) and drops the key; unused keys are dropped after 15
 * minutes. From then on, and after any restart, the sealed value in the store cannot be opened by
 * anyone (crypto-shredding). A restart between the submission and the check finds no key: the
 * check records `VerificationCodeLost` and the person is asked, in a DM, to enter the code again.
 *
 * **Phone numbers are never stored in clear, and can be shredded.** A number is sealed under its
 * owner's own data key (src/people/personKeys.ts: `personkey-<slackUserId>`, itself wrapped under
 * the data key ring, SWITCHBOARD_DATA_KEYS, never under a vendor secret that rotates; keys wrapped
 * under VONAGE_SIGNATURE_SECRET before the ring are re-wrapped at start) wherever it is recorded:
 * the `/verify` command and the verification events, the people directory's
 * `PersonLinked { system: 'phone' }`, the pager's pages and opt-outs, and the replies from that
 * phone; lookups by number use a blind index (an HMAC under the same key) and the pager's
 * in-memory index. Beside it, a masked form for people
 * (`+44 •••• ••0123`). The recorded `/verify` slash command keeps `[Redacted]` for its text, and
 * the communications webhooks are recorded without their numbers. When HR says someone left,
 * `pager.forget` deletes their key (`EventStore.deleteStream`): every copy becomes unreadable.
 * A number from someone nobody verified (an SMS from a stranger) is sealed under the data key
 * ring. Records written before person keys existed (a clear link, `sealed:v1:` numbers) are
 * read as they are and not rewritten; a person verifying again is linked with a sealed number.
 *
 * **At start** (`preflight`, before any processor or request), every person key is checked: a
 * key ring that cannot open one refuses the start (SB_CONFIG naming SWITCHBOARD_DATA_KEYS, the
 * missing ring key and how many people), and keys not wrapped under the ring's first key are
 * re-wrapped (`PersonKeyRewrapped`).
 *
 * @example
 * const sb = await createSwitchboard({ config, logger, lifecycleOptions: { verification: { retry: { baseMs: 30 } } } });
 */

export type VerificationApi = Readonly<{
  client: VonageClient;
  vault: CodeVault;
  phones: PhoneSealer;
  personKeys: PersonKeys;
  readModel: VerificationReadModel;
}>;

export type VerificationOptions = Readonly<{
  /** Durable retries of communications calls (default UPSTREAM_RETRY: 5 attempts from 2 s). */
  retry?: Partial<RetryPolicy>;
  /** The communications client (default: the real one, built from the configuration). */
  client?: VonageClient;
  /** How long a code submission waits for the vendor's answer before the modal closes (default 2 s). */
  checkBudgetMs?: number;
  /** Digits in a code (default 6). */
  codeLength?: number;
  /** What the code SMS and call say it is from (default "Switchboard"). */
  brand?: string;
  /** Absolute URL of `/webhooks/vonage/voice`, given to calls for their events. */
  voiceEventUrl?: string;
}>;

const LOOKUP_BUDGET_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

const createVerification = (
  config: VerificationConfig,
  deps: LifecycleDeps,
  options: VerificationOptions | undefined,
): LifecycleInstance<VerificationApi> => {
  const { store, clock, slack, dispatch, logger } = deps;
  // One client, so one budget per API, for every caller: verification and paging.
  const client =
    options?.client ??
    createVonageClient({
      apiUrl: config.apiUrl,
      restUrl: config.restUrl,
      apiKey: config.apiKey,
      apiSecret: config.apiSecret,
      applicationId: config.applicationId,
      privateKey: config.privateKey,
      clock,
    });
  // The signed-webhook check of every `/webhooks/vonage/*` route: the JWT over the raw body, fresh.
  const verifySignature = vonageWebhookVerify({ secrets: config.signatureSecrets, clock });
  // A data key per person for their number (crypto-shredding), wrapped under the data key ring.
  const personKeys = createPersonKeys({ store, ring: deps.keyRing });
  const phones = createPhoneSealer(deps.keyRing, personKeys);
  // A test or the sandbox may pass it in; otherwise VONAGE_VOICE_EVENT_URL.
  const voiceEventUrl = options?.voiceEventUrl ?? config.voiceEventUrl;
  const vault = createCodeVault({ now: () => clock.now() });
  const readModel = createVerificationReadModel({ store });
  const codeLength = options?.codeLength ?? 6;
  const brand = options?.brand ?? 'Switchboard';
  const outOfCredit = deps.metrics.registry.counter(
    'switchboard_vonage_out_of_credit_total',
    'Calls the communications service refused because the account is out of credit (402): an operator alert',
    ['action'],
  );

  /**
   * `/verify status`: where the phone stands for paging (standing.ts), never "verified" for a
   * number that cannot be paged, then where a verification in progress stands.
   */
  const status = async (slackUserId: string): Promise<SlackMessage> => {
    const state = await readVerificationState(store, slackUserId);
    const phase = phaseOf(state);
    const attempt = state.context.attempt;
    const standing = await phoneStanding({ store, index: paging.index }, slackUserId);
    const inProgress = phase === 'requested' || phase === 'codeSent';
    const number = (masked: string | null) => (masked ? `Your number ${masked}` : 'Your number');
    const lines = [
      standing.kind === 'pageable'
        ? `:iphone: Your verified number is ${standing.masked} (since ${slackDate(standing.since)}). Switchboard pages you there.`
        : standing.kind === 'opted_out'
          ? `:no_bell: ${number(standing.masked)} is opted out of paging (replied STOP): Switchboard does not page you. To opt back in, verify it again with \`/verify &lt;your phone number&gt;\`.`
          : standing.kind === 'must_verify_again'
            ? `:warning: ${number(standing.masked)} must be verified again: Switchboard can no longer use it to page you. Use \`/verify &lt;your phone number&gt;\` (the same number is fine).`
            : ":iphone: You don't have a verified number yet.",
    ];
    if (attempt && phase !== 'verified') {
      const where: Record<string, string> = {
        requested: `A code is on its way to ${attempt.masked}.`,
        codeSent: `A code was sent to ${attempt.masked}${attempt.voice ? ' (now by phone call)' : ''}; enter it from the DM before ${slackDate(attempt.expiresAt)}. Wrong codes so far: ${attempt.wrongCodes} of 3.`,
        failed: `Your last verification (${attempt.masked}) failed.`,
        expired: `Your last code (${attempt.masked}) expired.`,
        cancelled: `Your last verification (${attempt.masked}) was cancelled.`,
      };
      if (where[phase]) lines.push(where[phase]);
    }
    if (standing.kind === 'none' && !inProgress)
      lines.push('Use `/verify &lt;your phone number&gt;` to start.');
    const text = lines.join('\n');
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
  };

  const checkOutcome = async (slackUserId: string, requestId: string, budgetMs: number) => {
    const until = Date.now() + budgetMs;
    const streamId = verificationStreamId(slackUserId);
    for (;;) {
      const events = await store.readStream(streamId);
      for (const e of events) {
        const d = e.data as { requestId?: unknown; triesLeft?: unknown };
        if (d.requestId !== requestId) continue;
        if (e.type === 'VerificationCodeRejected' && typeof d.triesLeft === 'number') {
          return { outcome: 'wrong_code' as const, triesLeft: d.triesLeft };
        }
        if (e.type === 'VerificationVerified') return { outcome: 'verified' as const };
        if (e.type === 'VerificationCodeLost') return { outcome: 'lost' as const };
      }
      if (Date.now() >= until) return null;
      await sleep(Math.min(50, Math.max(1, until - Date.now())));
    }
  };

  const CODE_PROBLEM: Readonly<Record<string, string>> = {
    none: 'There is no verification in progress. Start one with /verify.',
    requested: 'Your code is still on its way: wait for the SMS.',
    verified: 'This verification is already done: your number is verified.',
    failed: 'This verification has failed. Start again with /verify.',
    expired: 'This code has expired. Start again with /verify.',
    cancelled: 'This verification was cancelled. Start again with /verify.',
  };
  const codeProblem = async (slackUserId: string, attemptId: string): Promise<string | null> => {
    const state = await readVerificationState(store, slackUserId);
    if (state.context.attempt?.attemptId !== attemptId) {
      return 'This form is from an earlier verification: use the latest DM from Switchboard.';
    }
    const phase = phaseOf(state);
    return phase === 'codeSent' ? null : (CODE_PROBLEM[phase] ?? 'This code cannot be checked now.');
  };

  /** Number Insight before a start: a number the vendor reads otherwise is refused; no answer never blocks. */
  const lookup = async (sealedNumber: string): Promise<void> => {
    const digits = await phones.openForUse(sealedNumber);
    const found = await Promise.race([
      client.lookupNumber(digits).catch(() => null),
      sleep(LOOKUP_BUDGET_MS).then(() => null),
    ]);
    if (found && found.international.replace(/\D/g, '') !== digits) {
      throw new ValidationError(
        'The communications service reads that number differently: check it, in international form (+ and the country code).',
        { details: { reason: 'number_insight_mismatch' } },
      );
    }
  };

  // ─── paging ──────────────────────────────────────────────────────────────────────────────────
  // PAGING SLICE: `createPaging(...)` from `./pagingModule.ts` is built here and spread into the
  // instance below (routes, processors, webhooks, provides: { pager }). It gets `deps`, `client`,
  // `config.fromNumber`, `verifySignature` and `options?.voiceEventUrl`.
  const paging = createPaging({
    deps,
    client,
    fromNumber: config.fromNumber,
    verifySignature,
    phoneKey: (digits) => phones.key(digits),
    phones,
    forgetKey: (slackUserId) => personKeys.forget(slackUserId),
    ...(voiceEventUrl ? { voiceEventUrl } : {}),
  });
  // ─────────────────────────────────────────────────────────────────────────────────────────────

  return {
    routes: { ...verificationRoutes, ...paging.routes },
    processors: [
      readModel.processor,
      createVerificationUpstreamReactor({
        client,
        vault,
        phones,
        dispatch,
        retry: { ...UPSTREAM_RETRY, ...options?.retry },
        logger: logger.child({ lifecycle: 'verification' }),
        fromNumber: config.fromNumber,
        brand,
        ...(voiceEventUrl ? { voiceEventUrl } : {}),
        onOutOfCredit: (action) => outOfCredit.inc({ action }),
      }),
      createVerificationNoticesReactor({ outbox: deps.outbox }),
      createVerificationRemovalsReactor({ pager: paging.pager, outbox: deps.outbox }),
      createVerificationTimersReactor(),
      createVerificationPeopleReactor({ people: deps.people, phones }),
      ...paging.processors,
    ],
    listeners: (app, handlerDeps) =>
      registerVerificationListeners(app, {
        ...handlerDeps,
        verification: {
          phones,
          vault,
          codeLength,
          openView: async (triggerId, view) => {
            await slack.views.open({ trigger_id: triggerId, view });
          },
          status,
          checkOutcome,
          codeProblem,
          checkBudgetMs: options?.checkBudgetMs ?? 2_000,
        },
      }),
    webhooks: [verifyWebhookVerifier({ verifySignature, logger }), ...paging.webhooks],
    home: createVerificationHomeSection({
      store,
      standing: (slackUserId) => phoneStanding({ store, index: paging.index }, slackUserId),
    }),
    sensitiveActionIds: VERIFICATION_SENSITIVE_ACTION_IDS,
    // `/verify +44 7700 900123`: the number as typed is not kept in the recorded input.
    sensitiveSlashCommands: ['/verify'],
    enrich: async (command) => {
      if (!VERIFICATION_USER_COMMANDS.has(command.type)) return command;
      if (command.type === 'StartVerification') await lookup(String(command.data.number));
      if (!VERIFICATION_COUNTED_COMMANDS.has(command.type)) return command;
      await readModel.catchUp();
      return {
        ...command,
        data: {
          ...command.data,
          orgStarts: readModel.startsSince(new Date(command.metadata.now)),
          orgLimit: config.orgLimit,
        },
      };
    },
    rejectionText: (r) =>
      r.commandType in verificationRoutes && r.code === 'SB_ILLEGAL_STATE'
        ? { text: `:warning: ${r.message}` }
        : undefined,
    provides: {
      ...paging.provides,
      // Issue 20 item 4: the shift-start DM says whether the person can be paged.
      phoneStanding: {
        standingOf: async (person) =>
          (await phoneStanding({ store, index: paging.index }, person.slackUserId)).kind,
      },
    },
    parkedNotices: verificationParkedNotices,
    preflight: async () => {
      const report = await preparePersonKeys(personKeys, deps.keyRing);
      const total = report.rewrapped + report.current + report.elsewhere;
      logger.info(
        {
          personKeys: total,
          rewrapped: report.rewrapped,
          rewrappedElsewhere: report.elsewhere,
          ringKeyId: deps.keyRing.sealingKeyId,
        },
        report.rewrapped > 0
          ? `re-wrapped ${report.rewrapped} person key(s) under data ring key ${deps.keyRing.sealingKeyId}`
          : 'every person key opens under the data key ring',
      );
    },
    api: { client, vault, phones, personKeys, readModel },
  };
};

export const verification = defineLifecycle({
  ...verificationDeclaration,
  readModels: [VERIFICATION_READ_MODEL, PAGER_INDEX],
  create: (config: VerificationConfig, deps: LifecycleDeps, options: VerificationOptions | undefined) =>
    createVerification(config, deps, options),
});
