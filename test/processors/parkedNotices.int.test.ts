import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { type Env, loadConfig } from '../../src/config.ts';
import { newId } from '../../src/core/ids.ts';
import { ALL_LIFECYCLES, type LifecycleOptions } from '../../src/lifecycleList.ts';
import { PARKED_NOTICES_PROCESSOR } from '../../src/slack/parkedNotices.reactor.ts';
import { internalWords } from '../joins/pageFailureSupport.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { settle } from '../support/settle.ts';
import { startTestSlack } from '../support/slackHarness.ts';
import { tempDir, testEnv } from '../support/startApp.ts';
import { ticketCommand } from '../support/ticketLifecycle.ts';
import { type TicketsOptions, tickets } from '../support/ticketModule.ts';

/**
 * Issue 18, "never fail silently": a processor that gives up on an event parks it, and the people
 * who waited on that work are told in words where they look (through the lifecycle that owns the
 * stream), operators too when SWITCHBOARD_OPERATORS_CHANNEL is set, once per parked event, never
 * again after a restart that delivers everything again or a replay. The parks are real: the test
 * lifecycle's fragile processors give up (a permanent error) on touches of `BROKEN…` tickets.
 */

type Running = { sb: Switchboard; logs: LogSink };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const boot = async (
  fake: FakeSlack,
  dbPath: string,
  env: Env,
  options: TicketsOptions,
  before?: (sb: Switchboard) => Promise<void>,
): Promise<Running> => {
  const config = loadConfig(testEnv(fake, dbPath, { TICKETS_TOKEN: 'tok', ...env }), [
    ...ALL_LIFECYCLES,
    tickets,
  ]);
  const logs = createLogSink();
  const sb = await createSwitchboard({
    config,
    logger: logs.logger({ level: 'debug' }),
    host: '127.0.0.1',
    httpGraceMs: 1_000,
    schedulerPollMs: 20,
    lifecycles: [tickets],
    lifecycleOptions: { tickets: options } as LifecycleOptions,
  });
  await before?.(sb);
  await sb.start();
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await sb.stop();
  });
  const stop = sb.stop;
  return {
    sb: {
      ...sb,
      stop: async () => {
        stopped = true;
        await stop();
      },
    },
    logs,
  };
};

const setup = async () => {
  const fake = await startTestSlack();
  const tmp = tempDir('switchboard-parked-');
  cleanups.push(async () => {
    await fake.close();
    tmp.cleanup();
  });
  return { fake, dbPath: join(tmp.dir, 'switchboard.db') };
};

/** Alice opens ticket BROKEN1 and touches it: every fragile processor gives up on the touch. */
const openAndBreak = async (sb: Switchboard) => {
  await sb.bus.dispatch(ticketCommand('OpenTicket', 'BROKEN1', { commandId: newId(), actor: 'U0ALICE' }));
  await sb.bus.dispatch(ticketCommand('TouchTicket', 'BROKEN1', { commandId: newId(), actor: 'U0ALICE' }));
  await settle(sb);
};

const texts = (fake: FakeSlack, except: readonly string[] = []) =>
  fake
    .callsOf('chat.postMessage')
    .filter((c) => !except.includes(String(c.params['channel'])))
    .flatMap((c) => [String(c.params['text'] ?? ''), JSON.stringify(c.params['blocks'] ?? [])]);

const coded = (logs: LogSink, code: string) => logs.lines().filter((l) => l['code'] === code);

describe('a parked event is said, in words, where people look (issue 18)', () => {
  it('tells the ticket opener once, with no internal text, and never again after a restart or a replay', async () => {
    const { fake, dbPath } = await setup();
    const first = await boot(fake, dbPath, {}, { fragile: ['a', 'b'], parkedNotices: {} });
    await openAndBreak(first.sb);

    const parked = await first.sb.processors.listParked();
    expect(parked.map((p) => p.processorId).sort()).toEqual(['ticket-fragile-a', 'ticket-fragile-b']);
    // Two processors gave up on one event: Alice hears of it once.
    const dms = fake.messages(fake.dmChannel('U0ALICE').id);
    expect(dms.map((m) => m.text)).toEqual([
      ":warning: Switchboard could not finish updating your ticket BROKEN1; what you see about it may be out of date. This has been logged for Switchboard's operators.",
    ]);
    const seen = texts(fake);
    expect(internalWords(seen)).toEqual([]);
    for (const p of parked) {
      for (const internal of [p.streamId, p.eventId, p.processorId, p.errorCode, 'cannot be touched']) {
        expect(seen.join('\n')).not.toContain(internal);
      }
    }
    expect(coded(first.logs, 'SB_PARKED_NOBODY_TOLD')).toEqual([]);
    const posts = fake.callsOf('chat.postMessage').length;
    await first.sb.stop();

    // A crash before any checkpoint: the notice processor gets every park again, and posts nothing.
    const second = await boot(fake, dbPath, {}, { fragile: ['a', 'b'], parkedNotices: {} }, async (sb) => {
      await sb.store.storeCheckpoint(PARKED_NOTICES_PROCESSOR, 0n);
    });
    await settle(second.sb);
    expect(
      second.logs
        .lines()
        .some((l) => l['processorId'] === PARKED_NOTICES_PROCESSOR && l['msg'] === 'caught up'),
    ).toBe(true);
    // Replayed and failing again: still parked, nobody told twice.
    const replay = await second.sb.processors.replayParked('ticket-fragile-a');
    expect(replay.failed).toHaveLength(1);
    await settle(second.sb);
    expect(fake.callsOf('chat.postMessage')).toHaveLength(posts);
    expect(fake.messages(fake.dmChannel('U0ALICE').id)).toHaveLength(1);
  });

  it('with SWITCHBOARD_OPERATORS_CHANNEL, operators get each park with what they need', async () => {
    const { fake, dbPath } = await setup();
    const { sb, logs } = await boot(
      fake,
      dbPath,
      { SWITCHBOARD_OPERATORS_CHANNEL: 'C0GENERAL' },
      { fragile: ['a', 'b'], parkedNotices: { channel: 'C0INCIDENTS' } },
    );
    await openAndBreak(sb);

    const parked = await sb.processors.listParked();
    const ops = fake.messages('C0GENERAL').map((m) => m.text);
    expect(ops).toHaveLength(2);
    for (const p of parked) {
      const text = ops.find((t) => t.includes(`\`${p.processorId}\``));
      expect(text).toBeDefined();
      for (const needed of [
        'TicketTouched',
        'ticket-BROKEN1',
        p.eventId,
        'SB_VALIDATION',
        `npm run events -- read processor-${p.processorId}`,
        `replayParked('${p.processorId}', '${p.eventId}')`,
        'People told: <@U0ALICE>, <#C0INCIDENTS>',
      ]) {
        expect(text).toContain(needed);
      }
    }
    // People: their words, once per place, saying operators were told.
    expect(fake.messages('C0INCIDENTS').map((m) => m.text)).toEqual([
      ":warning: Switchboard could not finish updating a ticket. Switchboard's operators have been told.",
    ]);
    expect(fake.messages(fake.dmChannel('U0ALICE').id).map((m) => m.text)).toEqual([
      ":warning: Switchboard could not finish updating your ticket BROKEN1; what you see about it may be out of date. Switchboard's operators have been told.",
    ]);
    expect(internalWords(texts(fake, ['C0GENERAL']))).toEqual([]);
    expect(coded(logs, 'SB_PARKED_NOBODY_TOLD')).toEqual([]);
  });

  it('says in the log that nobody in Slack was told when the owner names nobody and no operators channel is set', async () => {
    const { fake, dbPath } = await setup();
    const { sb, logs } = await boot(fake, dbPath, {}, { fragile: ['a'] });
    await openAndBreak(sb);

    expect(await sb.processors.listParked()).toHaveLength(1);
    expect(fake.callsOf('chat.postMessage')).toEqual([]);
    const [line] = coded(logs, 'SB_PARKED_NOBODY_TOLD');
    expect(line).toMatchObject({
      level: 'error',
      parkedProcessor: 'ticket-fragile-a',
      parkedStreamId: 'ticket-BROKEN1',
      parkedEventType: 'TicketTouched',
    });
    expect(String(line?.['msg'])).toContain('nobody in Slack was told');
  });

  it('does not park a notice Slack refuses, nor one that keeps failing: it logs it and moves on', async () => {
    const { fake, dbPath } = await setup();
    // Operators channel that does not exist (channel_not_found); Alice's DM fails on every try.
    const { sb, logs } = await boot(
      fake,
      dbPath,
      { SWITCHBOARD_OPERATORS_CHANNEL: 'C0NOWHERE' },
      { fragile: ['a'], parkedNotices: {} },
    );
    fake.setBehaviour('chat.postMessage', { status: 503 });
    await openAndBreak(sb);

    const undelivered = coded(logs, 'SB_PARKED_NOTICE_UNDELIVERED');
    expect(undelivered.map((l) => l['channel']).sort()).toEqual(['C0NOWHERE', 'U0ALICE']);
    expect(coded(logs, 'SB_PARKED_NOBODY_TOLD')).toHaveLength(1);
    // Nothing of the notice processor is parked: no notice of a notice.
    expect((await sb.processors.listParked()).map((p) => p.processorId)).toEqual(['ticket-fragile-a']);
    fake.clearBehaviour();
  });
});
