/**
 * The verification surface's Slack ids (src/ may not import handlers/; listeners import them from
 * here). `VERIFICATION_FIELD.code` is one of the module's `sensitiveActionIds`: the recorded Slack
 * input keeps `[Redacted]` in its place.
 */
export const VERIFICATION_ACTION = {
  enterCode: 'verification_enter_code',
  resend: 'verification_resend',
  voice: 'verification_call_me',
} as const;

export const VERIFICATION_VIEW = { code: 'verification_code' } as const;

export const VERIFICATION_FIELD = {
  codeBlock: 'verification_code_block',
  code: 'verification_code_input',
} as const;

export const VERIFICATION_SENSITIVE_ACTION_IDS: readonly string[] = [VERIFICATION_FIELD.code];
