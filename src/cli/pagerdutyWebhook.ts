import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Env, processEnv } from '../config.ts';
import { asError, isChatOpsError } from '../core/errors.ts';
import {
  createPagerDutyClient,
  type PagerDutyClient,
  type PagerDutyWebhookSubscription,
  paginate,
  type WebhookFilterType,
} from '../upstream/pagerduty.ts';

/**
 * `npm run pagerduty:webhook -- <url> [--service ID]… [--dry-run]`: makes sure the incident
 * service sends Switchboard the V3 webhooks its cards follow (changes made in the web app, by
 * monitoring, by timers). It lists the subscriptions (`GET /webhook_subscriptions`); one already
 * delivering to `<url>` with the same scope is shown and left alone; otherwise it is created
 * (`POST /webhook_subscriptions`) with the incident event types Switchboard acts on, and the signing
 * secret, which the service returns only then, is printed once for `PAGERDUTY_WEBHOOK_SECRET`.
 *
 * A CLI rather than a slash command: it is a one-off setup step by whoever deploys Switchboard,
 * who holds the API token and sets the secret in Switchboard's environment; a secret must never be
 * posted in Slack, and a Slack command would need its own notion of "admin".
 *
 * Scope: the whole account by default (`account_reference`); `--service ID` (repeatable) makes one
 * `service_reference` subscription per service instead.
 */

/** The incident event types Switchboard acts on (handlers/incident/webhooks.ts). */
export const SWITCHBOARD_WEBHOOK_EVENTS = [
  'incident.triggered',
  'incident.acknowledged',
  'incident.unacknowledged',
  'incident.resolved',
  'incident.reopened',
  'incident.escalated',
  'incident.reassigned',
  'incident.delegated',
  'incident.annotated',
  'incident.priority_updated',
] as const;

const USAGE = `usage: npm run pagerduty:webhook -- <url> [--service ID]... [--dry-run]

  <url>          where the incident service delivers webhooks: Switchboard's public
                 base URL (…/webhooks/pagerduty is added) or the full webhook URL
  --service ID   subscribe to one service (repeatable); default: the whole account
  --dry-run      show what exists and what would be created; change nothing

Uses PAGERDUTY_TOKEN (an account API key allowed to manage webhook subscriptions) and
PAGERDUTY_API_URL (default https://api.pagerduty.com).`;

export type WebhookCliIo = Readonly<{
  env: Env;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** A client to use instead of one built from the environment (tests). */
  pagerduty?: Pick<PagerDutyClient, 'listWebhookSubscriptions' | 'createWebhookSubscription'>;
}>;

type Scope = Readonly<{ type: WebhookFilterType; id?: string }>;

const scopeText = (s: Scope): string =>
  s.type === 'account_reference' ? 'the whole account' : `${s.type} ${s.id}`;

const describe = (sub: PagerDutyWebhookSubscription): string[] => {
  const missing = SWITCHBOARD_WEBHOOK_EVENTS.filter((e) => !sub.events.includes(e));
  return [
    `  id:     ${sub.id}${sub.active === false ? ' (inactive)' : ''}${sub.delivery_method.temporarily_disabled ? ' (temporarily disabled by the service)' : ''}`,
    `  url:    ${sub.delivery_method.url}`,
    `  scope:  ${scopeText({ type: sub.filter.type as WebhookFilterType, ...(sub.filter.id ? { id: sub.filter.id } : {}) })}`,
    `  events: ${sub.events.join(', ')}`,
    ...(missing.length > 0
      ? [
          `  missing event types Switchboard acts on: ${missing.join(', ')} (edit the subscription in the web app, or delete it and run this again)`,
        ]
      : []),
  ];
};

const webhookUrl = (raw: string): string | null => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/webhooks/pagerduty';
  return url.toString();
};

export const runPagerDutyWebhookCli = async (argv: readonly string[], io: WebhookCliIo): Promise<number> => {
  const positional: string[] = [];
  const services: string[] = [];
  let dryRun = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      io.stdout(USAGE);
      return 0;
    }
    if (a === '--dry-run') dryRun = true;
    else if (a === '--service') {
      const id = argv[++i];
      if (!id || id.startsWith('--')) {
        io.stderr(`--service needs a service id\n\n${USAGE}`);
        return 2;
      }
      services.push(id);
    } else if (a.startsWith('--')) {
      io.stderr(`unknown option ${a}\n\n${USAGE}`);
      return 2;
    } else positional.push(a);
  }
  const url = positional.length === 1 ? webhookUrl(positional[0]!) : null;
  if (!url) {
    io.stderr(USAGE);
    return 2;
  }
  if (url.startsWith('http:'))
    io.stderr(`warning: ${url} is not https; the incident service requires https outside a sandbox`);

  let pd = io.pagerduty;
  if (!pd) {
    const token = io.env.PAGERDUTY_TOKEN;
    if (!token) {
      io.stderr(`PAGERDUTY_TOKEN is not set.\n\n${USAGE}`);
      return 2;
    }
    const apiUrl = (io.env.PAGERDUTY_API_URL ?? 'https://api.pagerduty.com').replace(/\/+$/, '');
    pd = createPagerDutyClient({ apiUrl, eventsUrl: 'https://events.pagerduty.com', token });
  }

  const scopes: Scope[] =
    services.length > 0
      ? services.map((id) => ({ type: 'service_reference', id }))
      : [{ type: 'account_reference' }];

  try {
    const existing: PagerDutyWebhookSubscription[] = [];
    for await (const s of paginate((p) => pd.listWebhookSubscriptions(p), { limit: 100 })) existing.push(s);
    const ours = existing.filter((s) => s.delivery_method.url === url);
    const secrets: string[] = [];
    for (const scope of scopes) {
      const found = ours.find(
        (s) =>
          s.filter.type === scope.type && (scope.type === 'account_reference' || s.filter.id === scope.id),
      );
      if (found) {
        io.stdout(`A subscription for ${scopeText(scope)} already delivers to this URL; left as it is:`);
        for (const line of describe(found)) io.stdout(line);
        continue;
      }
      if (dryRun) {
        io.stdout(`Would create a subscription for ${scopeText(scope)} delivering to ${url}:`);
        io.stdout(`  events: ${SWITCHBOARD_WEBHOOK_EVENTS.join(', ')}`);
        continue;
      }
      const created = await pd.createWebhookSubscription({
        url,
        events: SWITCHBOARD_WEBHOOK_EVENTS,
        filter: scope,
        description: 'Switchboard: incident cards in Slack follow changes made anywhere',
      });
      io.stdout(`Created a subscription for ${scopeText(scope)}:`);
      for (const line of describe(created)) io.stdout(line);
      if (created.delivery_method.secret) secrets.push(created.delivery_method.secret);
    }
    if (secrets.length > 0) {
      io.stdout('');
      io.stdout('The signing secret is shown only now. Add it to PAGERDUTY_WEBHOOK_SECRET (comma-separated');
      io.stdout(
        'after the secrets already there) and restart Switchboard; until then it refuses these deliveries',
      );
      io.stdout('with 401 and the service retries them:');
      io.stdout(`PAGERDUTY_WEBHOOK_SECRET=${secrets.join(',')}`);
    }
    return 0;
  } catch (e) {
    const err = asError(e);
    io.stderr(
      isChatOpsError(err)
        ? `The incident service refused (${err.code}): ${err.message}${err.code === 'SB_UPSTREAM_AUTH' ? '\nThe token needs to be an account API key allowed to manage webhook subscriptions.' : ''}`
        : `Failed: ${err.message}`,
    );
    return 1;
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const code = await runPagerDutyWebhookCli(process.argv.slice(2), {
    env: processEnv(),
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
  });
  process.exitCode = code;
}
