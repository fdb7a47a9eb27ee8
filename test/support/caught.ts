import { ChatOpsError } from '../../src/core/errors.ts';

/**
 * The ChatOpsError a promise rejects with; anything else (a resolve, another error) fails the test.
 *
 * @example
 * const err = await caught(client.getIncident('missing'));
 * expect(err.code).toBe('SB_NOT_FOUND');
 */
export const caught = async (p: Promise<unknown>): Promise<ChatOpsError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ChatOpsError) return err;
    throw err;
  }
  throw new Error('expected a ChatOpsError');
};
