import { describe, expect, it } from 'vitest';
import { loadOpenApiDocument } from '../../sandbox/simulators/openapi.ts';
import { createCallbackValidator } from '../../sandbox/simulators/vonage/callbacks.ts';

/** The simulator's webhook bodies are checked against the vendored documents' callback schemas. */
const SPECS = new URL('../../sandbox/simulators/vonage/specs/', import.meta.url);
const messages = loadOpenApiDocument(new URL('vonage-messages-openapi.yml', SPECS));
const verify = loadOpenApiDocument(new URL('vonage-verify-v2-openapi.yml', SPECS));

describe('createCallbackValidator', () => {
  const v = createCallbackValidator();
  const status = {
    message_uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab',
    to: '447700900123',
    from: '447700900999',
    timestamp: '2026-11-23T10:00:00.000Z',
    status: 'delivered',
    channel: 'sms',
    client_ref: 'page1',
  };

  it('accepts a message status the document describes, and names what a broken one lacks', () => {
    expect(v.validate({ document: messages, schema: 'messageStatusSMS' }, status)).toEqual([]);
    const { message_uuid: _, ...noUuid } = status;
    expect(v.validate({ document: messages, schema: 'messageStatusSMS' }, noUuid)).toContainEqual(
      expect.objectContaining({ where: 'body', message: expect.stringContaining('message_uuid') }),
    );
  });

  it('holds the verify summary to its schema (status is one of completed, failed, expired)', () => {
    const summary = {
      request_id: 'c11236f4-00bf-4b89-84ba-88b25df97315',
      submitted_at: '2026-11-23T10:00:00.000Z',
      status: 'completed',
      type: 'summary',
      channel_timeout: 300,
      workflow: [{ channel: 'sms', initiated_at: '2026-11-23T10:00:00.000Z', status: 'completed' }],
    };
    expect(v.validate({ document: verify, schema: 'VerifyResource' }, summary)).toEqual([]);
    expect(
      v.validate({ document: verify, schema: 'VerifyResource' }, { ...summary, status: 'cancelled' }),
    ).not.toEqual([]);
  });
});
