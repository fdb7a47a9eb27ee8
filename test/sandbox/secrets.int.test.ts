import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../sandbox/sandbox.ts';
import { INCIDENTS_CHANNEL, PEOPLE } from '../../sandbox/world.ts';
import { VERIFICATION_ACTION, VERIFICATION_FIELD } from '../../src/verification/blocks/ids.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 18 item 3: the sandbox keeps its world's secrets (every vendor's, and the data key ring) in
 * its data folder, so a restart without `--reset` keeps verified phones working (paging and the
 * leaver guard); `--reset` makes new ones.
 */

const BEN = PEOPLE.find((p) => p.handle === 'ben')!;
const ADMIN_USER = PEOPLE.find((p) => p.handle === 'dana')!;

const dirs: Array<() => void> = [];
const running: Sandbox[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  for (const c of dirs.splice(0)) c();
});

const OPTIONS: Omit<SandboxOptions, 'dataDir'> = {
  ports: 0,
  logLevel: 'warn',
  seed: false,
  paging: { delayMinutes: 0, callAfterMinutes: 60 },
  hrLagMs: 500,
  startAt: '2026-11-23T09:00:00.000Z',
};
const start = async (dataDir: string, reset: boolean) => {
  const s = await startSandbox({ ...OPTIONS, dataDir, reset });
  running.push(s);
  return s;
};
const stop = async (s: Sandbox) => {
  await s.stop();
  running.splice(running.indexOf(s), 1);
};

/** Every secret the sandbox's world runs on: each vendor's credentials and the bot's data key ring. */
const secretsOf = (s: Sandbox): Record<string, string | undefined> => {
  const env: Record<string, string> = Object.assign({}, ...s.simulators.map((sim) => sim.env()));
  const names = [
    'SLACK_BOT_TOKEN',
    'SLACK_SIGNING_SECRET',
    'PAGERDUTY_TOKEN',
    'PAGERDUTY_WEBHOOK_SECRET',
    'VONAGE_API_KEY',
    'VONAGE_API_SECRET',
    'VONAGE_APPLICATION_ID',
    'VONAGE_PRIVATE_KEY',
    'VONAGE_SIGNATURE_SECRET',
    'HIBOB_SERVICE_USER_ID',
    'HIBOB_SERVICE_USER_TOKEN',
    'HIBOB_WEBHOOK_SECRET',
  ];
  return {
    ...Object.fromEntries(names.map((n) => [n, env[n]])),
    ring: (s.sb.config.dataKeys?.ring ?? []).map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
  };
};

/** `/verify` as the person, the code from their sandbox phone, Enter code, submit: verified. */
const verify = async (s: Sandbox, person: (typeof PEOPLE)[number]) => {
  const started = await s.surface.slashCommand({
    user: person.slackId,
    channel: INCIDENTS_CHANNEL,
    text: `/verify ${person.phone}`,
  });
  expect(started.status).toBe(200);
  const code = await waitFor(() => s.vonage.phones.lastCode(person.phone), {
    what: `the code on ${person.handle}'s phone`,
  });
  const dm = s.fake.dmChannel(person.slackId).id;
  const prompt = await waitFor(
    () =>
      s.fake.messages(dm).find((m) => JSON.stringify(m.blocks ?? []).includes(VERIFICATION_ACTION.enterCode)),
    { what: 'the DM with Enter code' },
  );
  const blocks = (prompt.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string }> }>;
  const blockIndex = blocks.findIndex((b) =>
    b.elements?.some((e) => e.action_id === VERIFICATION_ACTION.enterCode),
  );
  const elementIndex =
    blocks[blockIndex]?.elements?.findIndex((e) => e.action_id === VERIFICATION_ACTION.enterCode) ?? -1;
  await s.surface.blockAction({
    user: person.slackId,
    surface: { kind: 'message', channel: dm, ts: prompt.ts },
    blockIndex,
    elementIndex,
  });
  const modal = await waitFor(() => s.surface.modalOf(person.slackId), { what: 'the code modal' });
  await s.surface.submitView({
    user: person.slackId,
    viewId: modal.id,
    values: { [VERIFICATION_FIELD.codeBlock]: { [VERIFICATION_FIELD.code]: code } },
  });
  await waitFor(() => s.fake.messages(dm).find((m) => m.text.includes('is verified')), {
    what: `${person.handle} told they are verified`,
  });
  await waitFor(async () => (await s.sb.people.linkOf(person.slackId, 'phone')) ?? undefined, {
    what: `${person.handle}'s phone linked`,
  });
};

const smsTo = (s: Sandbox, person: (typeof PEOPLE)[number]) =>
  s.vonage.phones.inbox(person.phone).map((m) => m.text);

describe('the sandbox keeps its secrets', () => {
  it('a restart without --reset keeps a verified phone paged, and the leaver guard forgets it', async () => {
    const tmp = tempDir('sandbox-secrets-');
    dirs.push(tmp.cleanup);
    const first = await start(tmp.dir, true);
    await verify(first, BEN);
    const before = secretsOf(first);
    await stop(first);

    const second = await start(tmp.dir, false);
    expect(second.restored).toBe(true);
    expect(secretsOf(second)).toEqual(before);
    // The secrets are kept beside the world, readable by their owner only, and not in the world file.
    const file = join(tmp.dir, 'sandbox-secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const world = readFileSync(join(tmp.dir, 'sandbox-world.json'), 'utf8');
    for (const name of [
      'SLACK_SIGNING_SECRET',
      'VONAGE_SIGNATURE_SECRET',
      'HIBOB_WEBHOOK_SECRET',
      'ring',
    ] as const) {
      expect(world).not.toContain(before[name]?.split(',')[0]?.split(':').at(-1));
    }

    // Payments primary is Ben this week: a page reaches his phone.
    const sent = smsTo(second, BEN).length;
    const triggered = await second.surface.slashCommand({
      user: ADMIN_USER.slackId,
      channel: INCIDENTS_CHANNEL,
      text: '/incident trigger api Card payments failing',
    });
    expect(triggered.status).toBe(200);
    const page = await waitFor(
      () =>
        smsTo(second, BEN)
          .slice(sent)
          .find((t) => t.includes('Card payments failing')),
      { what: "the SMS page on Ben's phone after the restart", timeoutMs: 20_000 },
    );
    expect(page).toContain('reply 4 to acknowledge');

    // The leaver guard: HR says Ben left; his phone is forgotten and his data key shredded.
    second.hibob.webApp.terminate(BEN.hr.employeeId);
    await waitFor(
      async () => {
        second.clock.advance(60_000);
        const link = await second.sb.people.linkOf(BEN.slackId, 'phone');
        const key = await second.store.readStream(`personkey-${BEN.slackId}`);
        return (link === undefined && key.length === 0) || undefined;
      },
      { what: "Ben's phone forgotten as a leaver", timeoutMs: 30_000, intervalMs: 250 },
    );
  });

  it('a world saved before the sandbox kept its secrets starts, forgetting the phones sealed under lost ones, and says so', async () => {
    const tmp = tempDir('sandbox-secrets-upgrade-');
    dirs.push(tmp.cleanup);
    const first = await start(tmp.dir, true);
    await verify(first, BEN);
    await stop(first);
    rmSync(join(tmp.dir, 'sandbox-secrets.json'));

    const second = await start(tmp.dir, false);
    expect(second.restored).toBe(true);
    expect(second.notices).toEqual([
      'This world was saved before the sandbox kept its secrets: the phones verified in it (ben) must be verified again with /verify.',
    ]);
    expect(await second.store.readStream(`personkey-${BEN.slackId}`)).toEqual([]);
    // The next restart keeps the new secrets: nothing more to say.
    await stop(second);
    const third = await start(tmp.dir, false);
    expect(third.notices).toEqual([]);
  });

  it('--reset makes new secrets', async () => {
    const tmp = tempDir('sandbox-secrets-reset-');
    dirs.push(tmp.cleanup);
    const first = await start(tmp.dir, true);
    const before = secretsOf(first);
    await stop(first);
    const second = await start(tmp.dir, true);
    const after = secretsOf(second);
    for (const [name, value] of Object.entries(after)) {
      expect(value, name).toBeTruthy();
      expect(value, name).not.toBe(before[name]);
    }
  });
});
