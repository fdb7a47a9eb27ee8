import { describe, expect, it } from 'vitest';
import { createScrubber, REDACTED } from '../../src/logger.ts';
import { createLogSink } from '../support/logSink.ts';

describe('logger', () => {
  it('writes JSON lines with level names, time and bound children', () => {
    const sink = createLogSink();
    const logger = sink.logger();
    logger.child({ processorId: 'slack-replies' }).info({ position: 7 }, 'caught up');
    const [line] = sink.lines();
    expect(line).toMatchObject({
      level: 'info',
      service: 'switchboard',
      processorId: 'slack-replies',
      msg: 'caught up',
    });
    expect(typeof line?.['time']).toBe('string');
  });

  it('redacts secret keys at any of the first three levels', () => {
    const sink = createLogSink();
    sink.logger().warn(
      {
        token: 'plain-token-1',
        headers: { authorization: 'Basic abc', 'x-slack-signature': 'v0=deadbeef' },
        body: { response_url: 'http://127.0.0.1/response/1', user: { phone: '15551234567' } },
        verificationCode: '123456',
      },
      'request',
    );
    const text = sink.text();
    for (const secret of [
      'plain-token-1',
      'Basic abc',
      'v0=deadbeef',
      '/response/1',
      '15551234567',
      '123456',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(sink.lines()[0]?.['token']).toBe(REDACTED);
  });

  it('scrubs configured secrets and credential shapes from messages and error texts', () => {
    const sink = createLogSink();
    const logger = sink.logger({ secrets: ['my-signing-secret', 'pd-token-abcdef'] });
    logger.error(
      { err: new Error('call failed with Authorization: Bearer abcdefghijkl and token pd-token-abcdef') },
      'secret my-signing-secret leaked, token xoxb-123-456-abcdef, app xapp-1-A0-xyz123, jwt eyJhbGciOi.eyJzdWIiOi.c2ln',
    );
    logger.info('page +15551234567 via https://hooks.slack.com/commands/T1/2/xyz');
    const text = sink.text();
    for (const s of [
      'my-signing-secret',
      'pd-token-abcdef',
      'abcdefghijkl',
      'xoxb-123',
      'xapp-1',
      'eyJhbGciOi',
      '+15551234567',
      'hooks.slack.com/commands',
    ]) {
      expect(text).not.toContain(s);
    }
    expect(sink.lines()).toHaveLength(2);
  });

  it('leaves short secrets and ordinary text alone', () => {
    const scrub = createScrubber(['abc']);
    expect(scrub('abc def 2026-11-22T10:00:00Z')).toBe('abc def 2026-11-22T10:00:00Z');
  });
});
