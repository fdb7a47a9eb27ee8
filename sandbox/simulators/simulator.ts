/**
 * What every loopback vendor under `sandbox/simulators/<vendor>/` has in common, so the sandbox and
 * the test harnesses loop over vendors instead of naming each one. It is only the common part: each
 * simulator keeps its own richer API beside it (the fake Slack's workspace, people and faults; the
 * PagerDuty simulator's web app, account state, faults and webhook controls).
 *
 * A simulator's life:
 * 1. it is started by its vendor's `start…` function (options differ per vendor), on loopback;
 * 2. coming back from a previous run, it gets `importState(saved)` before any traffic;
 * 3. `env()` says what the bot needs to reach it, merged into the bot's configuration;
 * 4. once the bot listens, `connect(botUrl)` lets a simulator that calls the bot (webhooks) do so;
 * 5. `exportState()` saves it; `contractViolations()` lists what it was sent that the vendor's
 *    contract does not allow (requests its published API description refuses, calls without
 *    credentials, unknown methods), which a test or the sandbox can show or assert away;
 * 6. `stop()`.
 *
 * @example
 * const simulators: Simulator[] = [await startFakeSlack(), await startPagerDutySimulator()];
 * const config = loadConfig({ ...simulatorEnv(simulators), EVENT_STORE_URL: 'sqlite::memory:' });
 * const { url } = await (await createSwitchboard({ config, logger })).start();
 * await connectAll(simulators, url);
 * ...; assertNoContractViolations(simulators);
 * await stopAll(simulators);
 */
export interface Simulator<State = unknown> {
  /** Stable key (`slack`, `pagerduty`): names its saved state and its violations. */
  readonly name: string;
  /** The environment variables (names as `src/config.ts` reads them) the bot needs to talk to it. */
  env(): Readonly<Record<string, string>>;
  /** Simulators that call the bot (webhooks) start doing so here; `botUrl` is the bot's base URL. */
  connect?(botUrl: string): void | Promise<void>;
  /** Its state as plain JSON, to save across restarts. */
  exportState(): State;
  /** Restores what `exportState` returned; call it before any traffic (and before `connect`). */
  importState(state: State): void;
  /** What it saw that breaks the vendor's contract, oldest first. */
  contractViolations(): readonly ContractViolation[];
  stop(): Promise<void>;
}

export type ContractViolation = Readonly<{
  /** The simulator that saw it. */
  simulator: string;
  /** One line: the request and the rule it breaks. */
  summary: string;
}>;

/** The bot's environment for all of them; two simulators claiming one variable is a wiring error. */
export const simulatorEnv = (simulators: readonly Simulator[]): Record<string, string> => {
  const env: Record<string, string> = {};
  const owner = new Map<string, string>();
  for (const s of simulators) {
    for (const [key, value] of Object.entries(s.env())) {
      const other = owner.get(key);
      if (other !== undefined) throw new Error(`simulators ${other} and ${s.name} both set ${key}`);
      owner.set(key, s.name);
      env[key] = value;
    }
  }
  return env;
};

export const connectAll = async (simulators: readonly Simulator[], botUrl: string): Promise<void> => {
  for (const s of simulators) await s.connect?.(botUrl);
};

/** Each simulator's state under its name, for one saved file. */
export const exportStates = (simulators: readonly Simulator[]): Record<string, unknown> =>
  Object.fromEntries(simulators.map((s) => [s.name, s.exportState()]));

/** Gives each simulator its saved state, if the save has one under its name. */
export const importStates = (
  simulators: readonly Simulator[],
  saved: Readonly<Record<string, unknown>>,
): void => {
  for (const s of simulators) if (saved[s.name] !== undefined) s.importState(saved[s.name]);
};

export const contractViolations = (simulators: readonly Simulator[]): ContractViolation[] =>
  simulators.flatMap((s) => s.contractViolations());

export const assertNoContractViolations = (simulators: readonly Simulator[]): void => {
  const seen = contractViolations(simulators);
  if (seen.length > 0) {
    throw new Error(
      `the simulators saw ${seen.length} contract violation(s):\n${seen.map((v) => `${v.simulator}: ${v.summary}`).join('\n')}`,
    );
  }
};

/** Stops them all, last started first; every one is stopped even if another fails. */
export const stopAll = async (simulators: readonly Simulator[]): Promise<void> => {
  const failures: unknown[] = [];
  for (const s of [...simulators].reverse()) await s.stop().catch((e: unknown) => failures.push(e));
  if (failures.length > 0) throw failures[0];
};
