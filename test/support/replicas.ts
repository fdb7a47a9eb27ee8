import type { PagerDutySimulator } from '../../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { type MainProcess, postSigned, spawnMain, testEnv } from './startApp.ts';

/**
 * Several real app processes (src/main.ts) on one SQLite file, as replicas behind a load balancer:
 * for the replicas test and `npm run bench -- replicas`.
 */

export const REPLICA_USER = { slack: 'U0ANA', email: 'ana.silva@example.org' } as const;
export const REPLICA_CHANNEL = 'C0OPS';
export const REPLICA_WEBHOOK_SECRET = 'whsec-replicas-7c1e';

/** Starts one replica (`SWITCHBOARD_REPLICA_ID=id`) on the store file. */
export const spawnReplica = (
  input: Readonly<{
    id: string;
    dbPath: string;
    fake: FakeSlack;
    pd: PagerDutySimulator;
    claimExpirySeconds: number;
    env?: Record<string, string>;
  }>,
): Promise<MainProcess> =>
  spawnMain(
    testEnv(input.fake, input.dbPath, {
      ...simulatorEnv([input.fake, input.pd]),
      LOG_LEVEL: 'info',
      SWITCHBOARD_REPLICA_ID: input.id,
      SWITCHBOARD_CLAIM_EXPIRY_SECONDS: String(input.claimExpirySeconds),
      ...input.env,
    }),
    30_000,
  );

/**
 * Which processors this replica runs under a claim (`switchboard_processor_claim_held`, from
 * /metrics): processor → true (held here) or false (another replica holds it, or nobody).
 */
export const claimsOf = async (url: string): Promise<Map<string, boolean>> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const held = new Map<string, boolean>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('switchboard_processor_claim_held{')) continue;
    const processor = /processor="([^"]+)"/.exec(line)?.[1];
    if (processor) held.set(processor, line.trim().endsWith(' 1'));
  }
  return held;
};

/** `/incident trigger Payments API <title>`, signed, to one replica; true when acknowledged (200). */
export const sendTrigger = async (url: string, fake: FakeSlack, title: string): Promise<boolean> => {
  try {
    const res = await postSigned(
      `${url}/slack/events`,
      slashCommandBody({
        command: '/incident',
        text: `trigger Payments API ${title}`,
        user_id: REPLICA_USER.slack,
        channel_id: REPLICA_CHANNEL,
        response_url: fake.responseUrl({ channel: REPLICA_CHANNEL, user: REPLICA_USER.slack }),
        trigger_id: fake.issueTrigger({ user: REPLICA_USER.slack }),
      }),
      'form',
    );
    await res.text();
    return res.status === 200;
  } catch {
    return false; // the replica is gone: not acknowledged
  }
};

/** Cards posted in the channel for an incident number (a repeated post would show twice). */
export const cardsOf = (fake: FakeSlack, number: number) =>
  fake
    .messages(REPLICA_CHANNEL)
    .filter((m) => Array.isArray(m.blocks) && m.bot_id !== '' && m.text.startsWith(`#${number} `));
