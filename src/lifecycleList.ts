import { incidentsDeclaration } from '../incidents/config.ts';
import { timeOffDeclaration } from '../timeOff/config.ts';
import { verificationDeclaration } from '../verification/config.ts';
import type { LifecycleDeclaration } from './config.ts';
import { type ApiOf, type LazyLifecycle, lazyLifecycle, type OptionsOf } from './lifecycle.ts';
import { PLANNED_LIFECYCLES } from './planned.ts';

/**
 * THE list of lifecycle modules Switchboard runs, in the order their App Home sections show. The
 * composition root loops over it; nothing else names a lifecycle. Each is listed by its
 * declaration (`src/<lifecycle>/config.ts`: name, title, slash commands, configuration) and a
 * dynamic `import()` of its module (`handlers/<lifecycle>/module.ts`): a start loads the code of
 * the lifecycles that are switched on, and the operator commands that read the configuration load
 * none. Adding one: see docs/adding-a-lifecycle.md.
 */
export const LIFECYCLES = [
  lazyLifecycle(
    incidentsDeclaration,
    async () => (await import('../../handlers/incident/module.ts')).incidents,
  ),
  lazyLifecycle(
    verificationDeclaration,
    async () => (await import('../../handlers/verification/module.ts')).verification,
  ),
  lazyLifecycle(timeOffDeclaration, async () => (await import('../../handlers/timeOff/module.ts')).timeOff),
] as const satisfies readonly LazyLifecycle[];

/**
 * Every lifecycle Switchboard declares: the ones it runs, then the planned ones (declared in
 * planned.ts with their commands and configuration, not built yet). Configuration, the
 * switched-off log lines and slash-command ownership go over this list.
 */
export const ALL_LIFECYCLES: readonly LifecycleDeclaration[] = [...LIFECYCLES, ...PLANNED_LIFECYCLES];

export type RunnableLifecycle = (typeof LIFECYCLES)[number];
export type LifecycleName = RunnableLifecycle['name'];
/** What `sb.lifecycle(name)` gives tests and the sandbox for a running lifecycle. */
export type LifecycleApi<N extends LifecycleName> = ApiOf<Extract<RunnableLifecycle, { name: N }>>;
/** Per-lifecycle knobs for tests and the sandbox: `{ incidents: { retry: { baseMs: 30 } } }`. */
export type LifecycleOptions = Readonly<{ [M in RunnableLifecycle as M['name']]?: OptionsOf<M> }>;
