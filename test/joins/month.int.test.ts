import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCli } from '../../src/cli/keys.ts';
import { ringEntry, TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  DAY,
  HR_IDS,
  type JoinsHarness,
  MINUTE,
  PHONES,
  startJoinsHarness,
} from './harness.ts';
import { everythingPeopleSaw, internalWords } from './pageFailureSupport.ts';

/**
 * Issue 18: a month in the life of a team, on one manual clock. Every day an alert on Payments API
 * pages whoever is on call (the rota: Ben, Ana, Chen, Ben, Ana by week; Dana at level 2), and
 * through the month Switchboard lives what a team's month brings: a restart every three days, a
 * rotation of the communications service's webhook secret (day 10, with the old value accepted
 * until day 12), a rotation of the data key ring (day 15: a key in front; day 18: the old one
 * removed once `keys status` says it may go), and a leaver (Chen, on call, leaves on day 16).
 *
 * Every alert must page someone who can be reached (a verified phone, never the leaver), nothing may
 * be parked, and nothing internal may reach anyone. Some alerts are acknowledged by SMS from the
 * paged phone, so the way back works across every restart and rotation too.
 */
let h: JoinsHarness;
const NEW_SIGNATURE_SECRET = 'vonage-signature-secret-after-the-leak-7f3a';
const MONTH_KEY = ringEntry('month', 0x6d);

beforeAll(async () => {
  h = await startJoinsHarness();
  for (const person of [ANA, BEN, CHEN, DANA] as const) await h.verifyPhone(person);
  await h.idle();
});
afterAll(async () => {
  await h?.stop();
});

const PEOPLE = [ANA, BEN, CHEN, DANA] as const;
type Person = (typeof PEOPLE)[number];

/** Who got an SMS page about incident `number`. */
const pagedAbout = (number: number): Person[] =>
  PEOPLE.filter((p) => h.smsTo(PHONES[p]).some((m) => m.text.includes(`#${number} `)));

const keysStatus = async (env: Record<string, string>): Promise<string> => {
  let out = '';
  const code = await runKeysCli(['status'], {
    env,
    store: h.sb.store,
    stdout: (t) => {
      out += `${t}\n`;
    },
    stderr: (t) => {
      out += `${t}\n`;
    },
  });
  expect(code).toBe(0);
  return out;
};

describe('a month in the life', () => {
  // About 10 s on a quiet machine: thirty days of alerts, nine restarts. Its own timeout, so a loaded
  // machine (CI, other work) slows it down without failing it; every wait inside is on a condition.
  it('30 days, restarts, a webhook secret rotation, a key ring rotation and a leaver: every alert pages a reachable person, nothing is parked', {
    timeout: 300_000,
  }, async () => {
    const oldSignatureSecret = h.vonage.signatureSecret;
    /** The environment each restart adds to the simulators' own (which follow their rotations). */
    let env: Record<string, string> = {};
    const reachable = new Set<Person>(PEOPLE);
    const log: string[] = [];

    for (let day = 0; day < 30; day++) {
      // What the day brings, before its alert.
      if (day === 10) {
        // The communications service's signature secret leaked: rotated at the vendor, the old value
        // still accepted while its deliveries in flight arrive.
        h.vonage.rotateSignatureSecret(NEW_SIGNATURE_SECRET);
        env = { ...env, VONAGE_SIGNATURE_SECRET_PREVIOUS: oldSignatureSecret };
        await h.restart(env);
      } else if (day === 12) {
        const { VONAGE_SIGNATURE_SECRET_PREVIOUS: _done, ...rest } = env;
        env = rest;
        await h.restart(env);
      } else if (day === 15) {
        // A key in front of the ring: the start re-wraps every person key under it.
        env = { ...env, SWITCHBOARD_DATA_KEYS: `${MONTH_KEY},${TEST_DATA_KEYS}` };
        await h.restart(env);
      } else if (day === 16) {
        // Chen, on call this week, leaves: HR says so, his phone is forgotten, his turn stood in for.
        h.sim.webApp.terminate(HR_IDS.chen);
        reachable.delete(CHEN);
        // HR shows it after its lag; then the leaver guard acts.
        const forgotten = async () => (await h.sb.people.linkOf(CHEN, 'phone')) === undefined;
        for (let i = 0; i < 12 && !(await forgotten()); i++) await h.advanceTimers(10_000);
        expect(await forgotten(), "Chen's phone forgotten").toBe(true);
      } else if (day === 18) {
        const status = await keysStatus({
          SWITCHBOARD_DATA_KEYS: env.SWITCHBOARD_DATA_KEYS ?? TEST_DATA_KEYS,
        });
        expect(status).toContain('"test" is safe to remove');
        env = { ...env, SWITCHBOARD_DATA_KEYS: MONTH_KEY };
        await h.restart(env);
      } else if (day % 3 === 0 && day > 0) {
        await h.restart(env);
      }

      const incident = await h.trigger(`Day ${day + 1}: card payments failing`);
      await h.advanceTimers(5 * MINUTE);
      const paged = await waitFor(
        () => {
          const who = pagedAbout(incident.number);
          return who.length > 0 ? who : undefined;
        },
        { what: `a page about #${incident.number} on day ${day + 1}`, timeoutMs: 15_000 },
      );
      log.push(`day ${day + 1}: #${incident.number} paged ${paged.join(', ')}`);
      for (const person of paged) {
        expect(reachable.has(person), `day ${day + 1}: ${person} paged, who cannot be reached`).toBe(true);
      }

      // Every third day the paged person acknowledges from the phone; the team resolves in Slack.
      const first = paged[0] as Person;
      if (day % 3 === 1) {
        expect((await h.vonage.phones.replySms(PHONES[first], `4 ${incident.number}`)).ok).toBe(true);
        await waitFor(
          () => h.pd.state.incidents.get(incident.incidentId)?.status === 'acknowledged' || undefined,
          { what: `#${incident.number} acknowledged by SMS on day ${day + 1}`, timeoutMs: 15_000 },
        );
      }
      await h.incident(`resolve ${incident.number}`, { user: DANA });
      await waitFor(() => h.pd.state.incidents.get(incident.incidentId)?.status === 'resolved' || undefined, {
        what: `#${incident.number} resolved on day ${day + 1}`,
        timeoutMs: 15_000,
      });
      await h.advanceTimers(DAY - 5 * MINUTE);
    }

    // Chen's week after he left went to someone else; Ben and Ana took their own turns.
    expect(log.filter((l) => /day (1[7-9]|2[01]):/.test(l)).every((l) => !l.includes(CHEN))).toBe(true);
    expect(log.some((l) => l.includes(BEN))).toBe(true);
    expect(log.some((l) => l.includes(ANA))).toBe(true);

    // Nothing parked, nobody unreachable, nothing internal said to anyone.
    expect(await h.sb.store.readAll({ filter: { eventTypes: ['ProcessorEventParked'] } })).toEqual([]);
    const said = everythingPeopleSaw(h);
    expect(said.length).toBeGreaterThan(100);
    expect(internalWords(said)).toEqual([]);
    expect(h.logs.text()).not.toContain('could not be opened');
  });
});
