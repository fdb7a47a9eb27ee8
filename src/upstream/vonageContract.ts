/**
 * The communications client's contract (Vonage-shaped: Verify v2, Messages, Voice, Number
 * Insight), written first so the client (`src/upstream/vonage.ts`) and the verification lifecycle
 * (`src/verification/`) can be built side by side. Numbers are E.164 digits without `+`
 * (`447700900123`), the form every one of these APIs takes and answers.
 *
 * Errors are ChatOpsErrors from `src/upstream/http.ts`; `details.reason` refines them:
 *
 * | What happened | code | `details.reason` |
 * |---|---|---|
 * | wrong code (the seed answers 401, the vendor 400) | SB_VALIDATION | `wrong_code` |
 * | request expired, already verified, cancelled, too many wrong codes (409, 410) | SB_ILLEGAL_STATE | `start_again` |
 * | cancel refused (before 30 s, or after the second workflow event) (409) | SB_ILLEGAL_STATE | `cannot_cancel_yet` / `cannot_cancel_now` |
 * | a verification already running for this number (409 concurrent) | SB_ILLEGAL_STATE | `already_running` |
 * | out of credit (402) | SB_UPSTREAM_REJECTED | `out_of_credit` |
 * | 422: a field the vendor refused (`details.field` names it) | SB_VALIDATION | `invalid_field` |
 * | 429 | SB_UPSTREAM_RATE_LIMITED (`details.retryAfterMs`) | — |
 * | credentials refused (401 on anything but a code check, 403) | SB_UPSTREAM_AUTH | — |
 * | Number Insight retired or not offered (404/410 after 2027-02-04, any failure) | — | `lookupNumber` answers null |
 *
 * RFC 7807 bodies (`type`, `title`, `detail`, `instance`, `invalid_parameters`) are parsed into
 * `vendorCode`/`vendorMessage`/`field`. Nothing any of these answers echo (the request's
 * `Authorization`, a code, a JWT) reaches an error message: http.ts scrubs them.
 */

/** Verify v2 channels Switchboard uses, in workflow order. */
export type VerifyChannel = 'sms' | 'voice';

export type StartVerificationInput = Readonly<{
  /** E.164 digits without `+`. */
  to: string;
  /** Shown in the SMS / spoken in the call: "Your <brand> code is …". */
  brand: string;
  /** Default `['sms', 'voice']`: SMS first, then a call when the SMS is not checked in time. */
  workflow?: readonly VerifyChannel[];
  /** 4–10, default 6. */
  codeLength?: number;
  /** Seconds each workflow step waits before the next (60–900), default 300. */
  channelTimeoutSeconds?: number;
  /** e.g. `en-gb`. */
  locale?: string;
  /**
   * Ours, echoed on the vendor's verify events: the verification stream's attempt id. 1–40 letters
   * and digits only (the vendor's pattern `^[a-zA-Z0-9]*$`; anything else is refused before it is
   * sent): a UUID goes without its hyphens.
   */
  clientRef: string;
}>;

export type StartedVerification = Readonly<{ requestId: string }>;

export type CheckResult = Readonly<{ status: 'completed' }>;

export type SendSmsInput = Readonly<{
  to: string;
  from: string;
  text: string;
  /** Ours, echoed on status webhooks: correlates receipts and makes a retry recognisable. 1–40 characters. */
  clientRef: string;
}>;

export type SentSms = Readonly<{ messageUuid: string }>;

/** The NCCO actions Switchboard uses. */
export type NccoAction =
  | Readonly<{ action: 'talk'; text: string; language?: string; bargeIn?: boolean; loop?: number }>
  | Readonly<{
      action: 'input';
      type: readonly ['dtmf'];
      dtmf?: Readonly<{ maxDigits?: number; timeOut?: number; submitOnHash?: boolean }>;
      eventUrl?: readonly string[];
      eventMethod?: 'POST';
    }>;

export type CreateCallInput = Readonly<{
  to: string;
  from: string;
  ncco: readonly NccoAction[];
  /** Where call events are sent (our `/webhooks/vonage/voice`). */
  eventUrl?: string;
  /** Seconds to ring before giving up (vendor `ringing_timer`, default 60). */
  ringingSeconds?: number;
}>;

export type CreatedCall = Readonly<{ uuid: string; conversationUuid: string; status: string }>;

export type NumberLookup = Readonly<{
  /** E.164 digits without `+`. */
  international: string;
  national: string;
  countryCode: string;
  countryName: string | null;
}>;

export type VonageClient = Readonly<{
  startVerification(input: StartVerificationInput): Promise<StartedVerification>;
  /** Resolves when the code is right; throws `wrong_code` / `start_again` otherwise. */
  checkCode(requestId: string, code: string): Promise<CheckResult>;
  cancelVerification(requestId: string): Promise<void>;
  /** Moves to the next workflow step now ("call me instead"). */
  nextWorkflow(requestId: string): Promise<void>;
  sendSms(input: SendSmsInput): Promise<SentSms>;
  createCall(input: CreateCallInput): Promise<CreatedCall>;
  /** Basic lookup; null when the lookup is unavailable (retired, failing): it never blocks. */
  lookupNumber(number: string): Promise<NumberLookup | null>;
}>;
