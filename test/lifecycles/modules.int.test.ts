import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { eventCallbackBody, slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { type Env, loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES, LIFECYCLES, type LifecycleOptions } from '../../src/lifecycleList.ts';
import type { LifecycleModule, ListedLifecycle } from '../../src/lifecycles/lifecycle.ts';
import type { Absences } from '../../src/lifecycles/ports.ts';
import { createLogger } from '../../src/logger.ts';
import { caught } from '../support/caught.ts';
import { createLogSink } from '../support/logSink.ts';
import { postSigned, TEST_BOT_TOKEN, tempDir, testEnv } from '../support/startApp.ts';
import { ticketStreamId } from '../support/ticketLifecycle.ts';
import { type TicketsApi, tickets } from '../support/ticketModule.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The module interface with a second real module (the ticket lifecycle) beside incidents: the
 * root plugs in its configuration, listeners, routes, enrich step, refusal text, App Home section
 * and ports without naming it, and refuses to start when two modules claim the same thing.
 */
type Running = { sb: Switchboard; url: string; fake: FakeSlack; stop(): Promise<void> };
const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

const configFor = (fake: FakeSlack, dir: string, env: Env, modules: readonly ListedLifecycle[]) =>
  loadConfig(testEnv(fake, join(dir, 'switchboard.db'), env), [
    ...ALL_LIFECYCLES,
    ...modules.filter((m) => !ALL_LIFECYCLES.some((l) => l.name === m.name)),
  ]);

const start = async (
  env: Env,
  // Tickets right after incidents, as when this test was written: the help list follows module order.
  modules: readonly ListedLifecycle[] = [LIFECYCLES[0], tickets, ...LIFECYCLES.slice(1)],
  lifecycleOptions: Readonly<Record<string, unknown>> = {},
): Promise<Running> => {
  const fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
  const tmp = tempDir('switchboard-modules-');
  const config = configFor(fake, tmp.dir, env, modules);
  const sb = await createSwitchboard({
    config,
    logger: createLogger({ level: 'silent', destination: createLogSink().stream }),
    host: '127.0.0.1',
    httpGraceMs: 1_000,
    schedulerPollMs: 20,
    lifecycles: modules,
    lifecycleOptions: lifecycleOptions as LifecycleOptions,
  });
  const { url } = await sb.start();
  const r: Running = {
    sb,
    url,
    fake,
    stop: async () => {
      await sb.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
  running.push(r);
  return r;
};

const slash = async (r: Running, command: string, text: string, user = 'U0ALICE') => {
  const responseUrl = r.fake.responseUrl({ channel: 'C0INCIDENTS', user });
  const res = await postSigned(
    `${r.url}/slack/events`,
    slashCommandBody({ command, text, user_id: user, response_url: responseUrl }),
    'form',
  );
  const body = await res.text();
  return {
    status: res.status,
    text: body ? String((JSON.parse(body) as { text?: unknown }).text ?? '') : '',
  };
};

const ticketsApi = (sb: Switchboard): TicketsApi | undefined =>
  (sb as unknown as { lifecycle(name: string): TicketsApi | undefined }).lifecycle('tickets');

describe('a second lifecycle module', () => {
  it('is switched on by its own credentials and plugs in listeners, routes, enrich, refusals and Home', async () => {
    const r = await start({ TICKETS_TOKEN: 'tok-1' });
    expect(r.sb.config.lifecycles).toMatchObject({ tickets: true, incidents: false });
    expect(ticketsApi(r.sb)?.token).toBe('tok-1');

    // Listener → inbox → enrich → the ticket decider.
    expect((await slash(r, '/ticket', 'open T1')).status).toBe(200);
    const opened = await waitFor(
      async () => (await r.sb.store.readStream(ticketStreamId('T1'))).find((e) => e.type === 'TicketOpened'),
      { what: 'TicketOpened' },
    );
    expect(opened.data).toMatchObject({ ticketId: 'T1', title: '[tok-1] ticket T1' });

    // A refusal reads the way the module words it.
    await slash(r, '/ticket', 'close T1');
    await slash(r, '/ticket', 'close T1');
    const refused = await waitFor(
      () =>
        r.fake.responsePosts
          .map((p) => String(p.body['text'] ?? ''))
          .find((t) => t.includes('CloseTicket refused')),
      { what: 'the refusal of the second close' },
    );
    expect(refused).toBe(':ticket: CloseTicket refused');

    // The Home tab is composed from the switched-on modules' sections (incidents is off here).
    await postSigned(
      `${r.url}/slack/events`,
      eventCallbackBody({ type: 'app_home_opened', user: 'U0ALICE', tab: 'home' }),
      'json',
    );
    const home = await waitFor(() => r.fake.homes.get('U0ALICE'), { what: 'the Home tab' });
    expect(JSON.stringify(home.view)).toContain('*Tickets* of <@U0ALICE>');

    // Switched-off and planned lifecycles still own their commands.
    expect((await slash(r, '/incident', 'list')).text).toContain('Incidents are switched off');
    expect((await slash(r, '/verify', '+15550001111')).text).toContain('Phone verification is switched off');
    expect((await slash(r, '/frobnicate', '')).text).toContain(
      'Try `/incident help`, `/ticket help`, `/verify help` or `/timeoff help`.',
    );
  });

  it('answers its commands with one line when its credentials are not set', async () => {
    const r = await start({});
    expect(r.sb.config.lifecycles['tickets']).toBe(false);
    expect(ticketsApi(r.sb)).toBeUndefined();
    expect((await slash(r, '/ticket', 'open T1')).text).toContain('Tickets are switched off');
  });

  it('finds the ports the switched-on modules offer, and none of a module that is off', async () => {
    const absences: Absences = { absencesOf: async () => [], whoIsOut: async () => [] };
    const r = await start({ TICKETS_TOKEN: 'tok-1' }, [...LIFECYCLES, tickets], {
      tickets: { provides: { absences } },
    });
    expect(r.sb.ports.get('absences')).toBe(absences);
    expect(r.sb.ports.get('onCall')).toBeUndefined(); // incidents is off
    expect(await caught(Promise.resolve().then(() => r.sb.ports.require('onCall', 'tickets')))).toMatchObject(
      {
        code: 'SB_NOT_FOUND',
        message: 'tickets needs on-call lookups, which no switched-on lifecycle offers',
      },
    );
    expect(ticketsApi(r.sb)?.ports.get('absences')).toBe(absences);
  });
});

describe('the composition root refuses, at start, what two modules claim', () => {
  const ticketsAgain = { ...tickets, name: 'ticketsAgain', slashCommands: ['/ticket2'] } as LifecycleModule;

  const refusal = async (env: Env, modules: readonly ListedLifecycle[], options = {}) => {
    const fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
    const tmp = tempDir('switchboard-modules-');
    try {
      const config = configFor(fake, tmp.dir, env, modules);
      return await createSwitchboard({
        config,
        logger: createLogger({ level: 'silent', destination: createLogSink().stream }),
        lifecycles: modules,
        lifecycleOptions: options as LifecycleOptions,
      }).then(
        () => {
          throw new Error('expected createSwitchboard to refuse');
        },
        (e: unknown) => e,
      );
    } finally {
      await fake.close();
      tmp.cleanup();
    }
  };

  it('a command type', async () => {
    const e = await refusal({ TICKETS_TOKEN: 't' }, [tickets, ticketsAgain]);
    expect(e).toMatchObject({
      code: 'SB_CONFIG',
      message: 'command type OpenTicket is claimed by two lifecycles: tickets and ticketsAgain',
    });
  });

  it('a slash command, even of a module that is off', async () => {
    const e = await refusal({}, [tickets, { ...tickets, name: 'ticketsAgain' } as LifecycleModule]);
    expect(e).toMatchObject({
      code: 'SB_CONFIG',
      message: 'slash command /ticket is claimed by two lifecycles: tickets and ticketsAgain',
    });
  });

  it('a port', async () => {
    const absences: Absences = { absencesOf: async () => [], whoIsOut: async () => [] };
    const onlyRoutesOnce = {
      ...ticketsAgain,
      create: (c, d, o) => ({ ...tickets.create(c as never, d, o as never), routes: {} }),
    } as LifecycleModule;
    const e = await refusal({ TICKETS_TOKEN: 't' }, [tickets, onlyRoutesOnce], {
      tickets: { provides: { absences } },
      ticketsAgain: { provides: { absences } },
    });
    expect(e).toMatchObject({
      code: 'SB_CONFIG',
      message: 'absences (absences) are offered by two lifecycles: tickets and ticketsAgain',
    });
  });
});
