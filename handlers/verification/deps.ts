import type { VerificationCommand, VerificationCommandType } from '../../machines/verification/commands.ts';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import type { CommandMetadata } from '../../src/core/messages.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { ModalView, SlackMessage } from '../../src/slack/blocks/format.ts';
import type { CodeVault } from '../../src/verification/codeVault.ts';
import type { PhoneSealer } from '../../src/verification/phone.ts';

/** What the verification listeners get from the module (handlers/verification/module.ts). */
export type VerificationHandlerDeps = Readonly<{
  phones: PhoneSealer;
  vault: CodeVault;
  /** Code length the vendor is asked for. */
  codeLength: number;
  openView(triggerId: string, view: ModalView): Promise<void>;
  /** `/verify status`, for the person. */
  status(slackUserId: string): Promise<SlackMessage>;
  /**
   * Waits (at most `budgetMs`) for the check of a submitted code to be answered: the wrong code's
   * tries left (0: the attempt failed), `verified`, `lost` (a restart), or null when it takes longer (the DM tells).
   */
  checkOutcome(
    slackUserId: string,
    requestId: string,
    budgetMs: number,
  ): Promise<
    Readonly<{ outcome: 'wrong_code'; triesLeft: number }> | Readonly<{ outcome: 'verified' | 'lost' }> | null
  >;
  /** Why a code for this attempt cannot be checked now (ended, superseded), or null when it can. */
  codeProblem(slackUserId: string, attemptId: string): Promise<string | null>;
  /** How long a code submission waits for the check's answer before closing the modal (default 2 s). */
  checkBudgetMs: number;
}>;

export type VerificationListenerDeps = HandlerDeps & Readonly<{ verification: VerificationHandlerDeps }>;

type Request = {
  [T in VerificationCommandType]: Readonly<{
    type: T;
    data: Extract<VerificationCommand, { type: T }>['data'];
  }>;
}[VerificationCommandType];

/** The typed command recorded from a Slack input (deterministic id from the input). */
export const verificationCommand = (
  input: SlackInput,
  request: Request,
  overrides: Partial<CommandMetadata> = {},
): VerificationCommand =>
  ({
    type: request.type,
    data: request.data,
    metadata: commandMetadata(input, 0, overrides),
  }) as VerificationCommand;

export const ephemeral = (m: SlackMessage | string) =>
  typeof m === 'string'
    ? { response_type: 'ephemeral' as const, text: m }
    : { response_type: 'ephemeral' as const, ...m };
