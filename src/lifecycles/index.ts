import { incidents } from '../../handlers/incident/module.ts';
import { timeOff } from '../../handlers/timeOff/module.ts';
import { verification } from '../../handlers/verification/module.ts';
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

export type RunnableLifecycle = (typeof LIFECYCLES)[number];
export type LifecycleName = RunnableLifecycle['name'];
/** What `sb.lifecycle(name)` gives tests and the sandbox for a running lifecycle. */
export type LifecycleApi<N extends LifecycleName> = ApiOf<Extract<RunnableLifecycle, { name: N }>>;
/** Per-lifecycle knobs for tests and the sandbox: `{ incidents: { retry: { baseMs: 30 } } }`. */
export type LifecycleOptions = Readonly<{ [M in RunnableLifecycle as M['name']]?: OptionsOf<M> }>;
