import { incidents } from '../incidents/module.ts';
import { SCHEDULER_READ_MODEL } from '../processors/scheduler.ts';
import type { ReadModelRegistration } from '../processors/snapshots.ts';
import { timeOff } from '../timeOff/module.ts';
import { verification } from '../verification/module.ts';
import type { ApiOf, LifecycleDeclaration, OptionsOf } from './lifecycle.ts';
import { PLANNED_LIFECYCLES } from './planned.ts';

/**
 * THE list of lifecycle modules Switchboard runs, in the order their App Home sections show. The
 * composition root loops over it; nothing else names a lifecycle. Adding one: see
 * docs/adding-a-lifecycle.md.
 */
export const LIFECYCLES = [incidents, verification, timeOff] as const;

/**
 * Every lifecycle Switchboard declares: the ones it runs, then the planned ones (declared in
 * planned.ts with their commands and configuration, not built yet). Configuration, the
 * switched-off log lines and slash-command ownership go over this list.
 */
export const ALL_LIFECYCLES: readonly LifecycleDeclaration[] = [...LIFECYCLES, ...PLANNED_LIFECYCLES];

/**
 * Every read model that resumes from snapshots, each registered once by its owner: the kernel's
 * scheduler and each lifecycle's declaration (`readModels`). `npm run events -- rebuild` reads it.
 */
export const READ_MODELS: readonly ReadModelRegistration[] = [
  SCHEDULER_READ_MODEL,
  ...LIFECYCLES.flatMap((m) => m.readModels ?? []),
];

export type RunnableLifecycle = (typeof LIFECYCLES)[number];
export type LifecycleName = RunnableLifecycle['name'];
/** What `sb.lifecycle(name)` gives tests and the sandbox for a running lifecycle. */
export type LifecycleApi<N extends LifecycleName> = ApiOf<Extract<RunnableLifecycle, { name: N }>>;
/** Per-lifecycle knobs for tests and the sandbox: `{ incidents: { retry: { baseMs: 30 } } }`. */
export type LifecycleOptions = Readonly<{ [M in RunnableLifecycle as M['name']]?: OptionsOf<M> }>;
