import type { LifecycleDeclaration } from './config.ts';

/**
 * The lifecycles that are planned but not built yet, declared in this one place: their names,
 * titles, slash commands and configuration slices, and no `create`.
 *
 * Why declare them at all: when manifest.yml registers a planned lifecycle's commands with Slack,
 * Slack sends them; someone must own them, so that they answer "… is switched off" instead of
 * "Switchboard doesn't know `/…`", the manifest test can check that every command has exactly one
 * owner, and an admin who sets its variables gets them validated (all or none) today.
 *
 * Building one: move its declaration into `src/<lifecycle>/module.ts`, add `create`, list it in
 * `src/lifecycles/index.ts` and delete it here (docs/adding-a-lifecycle.md). None is planned now:
 * incidents, verification and time off are all built.
 */
export const PLANNED_LIFECYCLES: readonly LifecycleDeclaration[] = [];
