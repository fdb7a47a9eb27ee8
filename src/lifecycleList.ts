import { incidentsDeclaration } from './incidents/config.ts';
import type { LifecycleDeclaration } from './lifecycles/config.ts';
import {
  type ApiOf,
  type LazyLifecycle,
  lazyLifecycle,
  moduleOf,
  type OptionsOf,
} from './lifecycles/lifecycle.ts';
import type { ReadModelRegistration } from './processors/snapshots.ts';
import { timeOffDeclaration } from './timeOff/config.ts';
import { verificationDeclaration } from './verification/config.ts';

/**
 * THE list of lifecycle modules Switchboard runs, in the order their App Home sections show: part
 * of the composition root, with src/app.ts (which loops over it) and src/main.ts. Nothing else
 * names a lifecycle. Each is listed by its declaration (`src/<lifecycle>/config.ts`: name, title,
 * slash commands, configuration) and a dynamic `import()` of its module
 * (`handlers/<lifecycle>/module.ts`): a start loads the code of the lifecycles that are switched
 * on, and the operator commands that read the configuration load none. Adding one: see
 * docs/adding-a-lifecycle.md.
 */
export const LIFECYCLES = [
  lazyLifecycle(incidentsDeclaration, async () => (await import('../handlers/incident/module.ts')).incidents),
  lazyLifecycle(
    verificationDeclaration,
    async () => (await import('../handlers/verification/module.ts')).verification,
  ),
  lazyLifecycle(timeOffDeclaration, async () => (await import('../handlers/timeOff/module.ts')).timeOff),
] as const satisfies readonly LazyLifecycle[];

/**
 * The lifecycles that are planned but not built yet, declared here: their names, titles, slash
 * commands and configuration slices, and no module.
 *
 * Why declare them at all: when manifest.yml registers a planned lifecycle's commands with Slack,
 * Slack sends them; someone must own them, so that they answer "… is switched off" instead of
 * "Switchboard doesn't know `/…`", the manifest test can check that every command has exactly one
 * owner, and an admin who sets its variables gets them validated (all or none) today.
 *
 * Building one: move its declaration into `src/<lifecycle>/config.ts`, write its module, list it in
 * LIFECYCLES and delete it here (docs/adding-a-lifecycle.md). None is planned now: incidents,
 * verification and time off are all built.
 */
export const PLANNED_LIFECYCLES: readonly LifecycleDeclaration[] = [];

/**
 * Every lifecycle Switchboard declares: the ones it runs, then the planned ones. Configuration,
 * the switched-off log lines and slash-command ownership go over this list.
 */
export const ALL_LIFECYCLES: readonly LifecycleDeclaration[] = [...LIFECYCLES, ...PLANNED_LIFECYCLES];

/**
 * Every read model that resumes from snapshots, each registered once by its owner: the kernel's
 * scheduler and each lifecycle's module (`readModels`). `npm run events -- rebuild` reads it; it
 * loads every lifecycle's code, so only that command calls it.
 */
export const loadReadModels = async (): Promise<readonly ReadModelRegistration[]> => {
  const { SCHEDULER_READ_MODEL } = await import('./processors/scheduler.ts');
  const modules = await Promise.all(LIFECYCLES.map((l) => moduleOf(l)));
  return [SCHEDULER_READ_MODEL, ...modules.flatMap((m) => m.readModels ?? [])];
};

export type RunnableLifecycle = (typeof LIFECYCLES)[number];
export type LifecycleName = RunnableLifecycle['name'];
/** What `sb.lifecycle(name)` gives tests and the sandbox for a running lifecycle. */
export type LifecycleApi<N extends LifecycleName> = ApiOf<Extract<RunnableLifecycle, { name: N }>>;
/** Per-lifecycle knobs for tests and the sandbox: `{ incidents: { retry: { baseMs: 30 } } }`. */
export type LifecycleOptions = Readonly<{ [M in RunnableLifecycle as M['name']]?: OptionsOf<M> }>;
