import type { App } from '@slack/bolt';
import type { CommandRoute } from '../application/dispatch.ts';
import type { Inbox } from '../application/inbox.ts';
import type { Clock } from '../core/clock.ts';
import type { KeyRing } from '../core/keyRing.ts';
import type { Command } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { WebhookVerifier } from '../http/webhookRoutes.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PeopleDirectory } from '../people/directory.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { CommandRejectedData } from '../processors/inboxDispatch.reactor.ts';
import type { SlackReplies, SlackReplyMessage } from '../processors/ports.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import type { ReadModelRegistration } from '../processors/snapshots.ts';
import type { KnownBlock } from '../slack/blocks/format.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import type { ParkedNotices } from '../slack/parkedNotices.reactor.ts';
import type { ReaderZones } from '../slack/time.ts';
import type { SwitchboardWebClient } from '../slack/webClient.ts';
import type { LifecycleDeclaration } from './config.ts';
import type { LifecyclePorts, PortDirectory } from './ports.ts';

/**
 * A lifecycle module: everything one lifecycle (incidents, verification, time off) brings to
 * Switchboard, declared in one object that `src/lifecycleList.ts` lists. The composition root
 * (`src/app.ts`) names no lifecycle: it builds the shared machinery (store, Slack, people, bus,
 * processors, HTTP), then for every module that is switched on calls `create` and plugs in what
 * the instance returns.
 *
 * Declared up front (known before anything is built, also for a switched-off module):
 * - `name`: the key in `config.lifecycles`, options and logs (`incidents`);
 * - `title`: what users read ("Incidents are switched off");
 * - `slashCommands`: the commands it owns; manifest.yml declares them, and a command owned twice
 *   is a start-up error. Those of a switched-off module answer with one line saying so;
 * - `config`: its configuration slice (variables, credentials; see config.ts).
 *
 * Built by `create(config, deps, options)` when it is on (see LifecycleInstance):
 * command routes, processors, Slack listeners, webhook routes, App Home section, refusal texts,
 * the enrich step, the ports it offers the others, and an `api` for tests and the sandbox.
 *
 * Everything a module builds lives in its own folders: `machines/<lifecycle>/` (rules),
 * `src/<lifecycle>/` (its declaration and configuration, client wiring, reactors, read models,
 * Block Kit), `handlers/<lifecycle>/` (its Slack and webhook edge, and this module:
 * `handlers/<lifecycle>/module.ts`, the lifecycle's composition, on the top floor because it wires
 * both). This interface is part of the kernel: it imports no lifecycle and nothing of `handlers/`;
 * the edge's types it names (HandlerDeps, WebhookVerifier) are the kernel's.
 *
 * @example
 * export const timeOff = defineLifecycle({
 *   name: 'timeOff',
 *   title: 'Time off',
 *   slashCommands: ['/timeoff', '/whosout'],
 *   config: timeOffConfig,
 *   create: (config, deps) => ({ routes, processors, listeners, webhooks, home, provides: { absences }, api: {} }),
 * });
 */

/** What a switched-on module gets from the root, shared by every lifecycle. */
export type LifecycleDeps = Readonly<{
  store: EventStore;
  clock: Clock;
  logger: Logger;
  /** The Slack Web API client (bounded retries, coded errors). */
  slack: SwitchboardWebClient;
  /** What must reach people in Slack goes through it: post once by key, update in place, Retry-After. */
  outbox: SlackOutbox;
  /** Who people are in every system (src/people/). */
  people: PeopleDirectory;
  /** The command bus. It exists once every module is created: call it from processors, not `create`. */
  dispatch: Dispatch;
  /** What the other switched-on lifecycles offer (see ports.ts for the rules). */
  ports: PortDirectory;
  /**
   * Replies through a recorded `response_url` (sealed at rest; `respond` opens it and posts only to
   * Slack's host) or as an ephemeral: for processors that answer a person's command later.
   */
  replies: SlackReplies;
  /** The app's Prometheus registry (`/metrics`): a module registers its own counters here. */
  metrics: Metrics;
  /** The data key ring (SWITCHBOARD_DATA_KEYS): what a module keeps sealed at rest is sealed on it. */
  keyRing: KeyRing;
  /**
   * Each person's Slack time zone (`users.info`), cached an hour: for times Slack cannot format
   * (SMS, voice, modal inputs, notification text). Slack-formatted times need none (src/slack/time.ts).
   */
  readerZones: ReaderZones;
}>;

/**
 * What every Slack listener gets from the root (`listeners(app, deps)`): it parses an input into
 * commands, records them with `inbox.accept`, and acks.
 */
export type HandlerDeps = Readonly<{
  inbox: Inbox;
  clock: Clock;
  logger: Logger;
}>;

/** One module's part of the App Home tab. */
export type HomeSection = Readonly<{
  /**
   * The section's blocks for this user, built when they open the tab. Sections are shown in the
   * list's order, separated by a divider. Throw to have the whole tab retried (a failed lookup);
   * explain in blocks what the user should know (not mapped, nothing open).
   */
  render(slackUserId: string, ctx: ProcessorContext): Promise<readonly KnownBlock[]>;
}>;

/** Completes a recorded command with what only the processor can know, right before dispatch. */
export type Enrich = (command: Command, ctx: ProcessorContext) => Promise<Command>;

export type LifecycleInstance<Api = unknown> = Readonly<{
  /** Command type → decider and stream. Every type is claimed by one module only. */
  routes?: Readonly<Record<string, CommandRoute>>;
  /** Reactors, projections and read models (stable processor ids). */
  processors?: readonly Processor[];
  /** Registers its Slack listeners (`handlers/<lifecycle>/index.ts`). */
  listeners?(app: App, deps: HandlerDeps): void;
  /** Its vendor webhook routes (`/webhooks/<vendor>…`), each with its signature check. */
  webhooks?: readonly WebhookVerifier[];
  /** Its part of the App Home tab. */
  home?: HomeSection;
  /** `action_id`s whose values are secrets (a typed one-time code): recorded as `[Redacted]`. */
  sensitiveActionIds?: readonly string[];
  /**
   * Slash commands whose typed text is personal data (`/verify +44…`): the recorded input keeps
   * `[Redacted]` instead, and the commands parsed from it carry what the lifecycle needs (sealed).
   */
  sensitiveSlashCommands?: readonly string[];
  /**
   * Runs in the inbox dispatcher before each of its commands (the types in `routes`) reaches the
   * decider: fills in what the edge could not know within Slack's 3 s (the acting user in the
   * vendor's system). A refusal-coded error refuses the command; others are retried.
   */
  enrich?: Enrich;
  /** How a refusal of one of its commands reads; undefined for the default text. */
  rejectionText?(rejection: CommandRejectedData): SlackReplyMessage | undefined;
  /** The ports it offers the other lifecycles (see ports.ts). */
  provides?: Partial<LifecyclePorts>;
  /**
   * Whom to tell, in words, when a processor parks an event of a stream it owns (issue 18: a
   * parked event nobody sees is a defect): the kernel's `parked-notices` asks the owner of the
   * stream, by prefix (src/slack/parkedNotices.reactor.ts). A prefix owned twice is refused.
   */
  parkedNotices?: ParkedNotices;
  /**
   * Runs at start, before any processor or request: checks and repairs what the module needs to
   * serve (the verification lifecycle re-wraps person keys under the ring's first key and refuses
   * a key ring that cannot open them). A throw stops the start; an SB_CONFIG error makes `npm
   * start` exit 2 with its message.
   */
  preflight?(): Promise<void>;
  /** What tests and the sandbox may reach: `sb.lifecycle('incidents')?.readModels`. */
  api: Api;
}>;

export type LifecycleModule<
  Name extends string = string,
  C = unknown,
  Api = unknown,
  Options = unknown,
> = LifecycleDeclaration<Name, C> &
  Readonly<{
    /**
     * Builds the switched-on lifecycle. `options` are the module's own knobs for tests and the
     * sandbox (`createSwitchboard({ lifecycleOptions: { incidents: { retry } } })`).
     */
    create(config: C, deps: LifecycleDeps, options: Options | undefined): LifecycleInstance<Api>;
    /**
     * The read models it keeps that resume from snapshots (each also one of its processors, with
     * the same name): registered here once, so `npm run events -- rebuild <name>` can build them
     * without starting the lifecycle, and a start refuses a snapshotted processor not listed here.
     */
    readModels?: readonly ReadModelRegistration[];
  }>;

/** A module, with its types inferred from the object (no type parameters to write). */
export const defineLifecycle = <const Name extends string, C, Api, Options = never>(
  module: LifecycleModule<Name, C, Api, Options>,
): LifecycleModule<Name, C, Api, Options> => module;

/**
 * A built lifecycle as the composition root lists it: its declaration at once (the configuration
 * and the slash-command owners need it, also when it is off), its module (`create` and everything
 * it imports) loaded by `load` only when it is switched on. So a start loads the code its
 * configuration uses, and a command that only reads the configuration loads none of it.
 */
export type LazyLifecycle<
  Name extends string = string,
  C = unknown,
  Api = unknown,
  Options = unknown,
> = LifecycleDeclaration<Name, C> & Readonly<{ load(): Promise<LifecycleModule<Name, C, Api, Options>> }>;

/** What the root runs: a module (tests pass their own), or a lifecycle loaded when it is on. */
export type ListedLifecycle = LifecycleModule | LazyLifecycle;

/**
 * A lifecycle listed by its declaration and a dynamic `import()` of its module.
 *
 * @example
 * lazyLifecycle(timeOffDeclaration, async () => (await import('../handlers/timeOff/module.ts')).timeOff)
 */
export const lazyLifecycle = <const Name extends string, C, Api, Options>(
  declaration: LifecycleDeclaration<Name, C>,
  load: () => Promise<LifecycleModule<Name, C, Api, Options>>,
): LazyLifecycle<Name, C, Api, Options> => ({ ...declaration, load });

/** The module of a listed lifecycle, its code loaded if need be. */
export const moduleOf = async (listed: ListedLifecycle): Promise<LifecycleModule> => {
  if (!('load' in listed)) return listed;
  const module = await listed.load();
  if (module.name !== listed.name)
    throw new TypeError(`lifecycle ${listed.name} loaded the module of ${module.name}`);
  return module;
};

export type ApiOf<M> =
  M extends LifecycleModule<string, unknown, infer Api, unknown>
    ? Api
    : M extends LazyLifecycle<string, unknown, infer Api, unknown>
      ? Api
      : never;
export type OptionsOf<M> =
  M extends LifecycleModule<string, unknown, unknown, infer O>
    ? O
    : M extends LazyLifecycle<string, unknown, unknown, infer O>
      ? O
      : never;
export type ConfigOf<M> = M extends LifecycleDeclaration<string, infer C> ? C : never;
