#!/usr/bin/env node
/**
 * `npx mailroom ...` in a clone of the repository (after `pnpm install`): the CLI run from its TypeScript
 * sources, so no build is needed; an installed @mailroom/cli runs its build instead. Plain JavaScript,
 * since npx starts it with Node alone. In this process, not a child, so that signals reach the CLI's own
 * graceful stop exactly once: tsx's loader compiles the sources, and a resolve hook adds the
 * `mailroom-source` condition (what `--conditions=mailroom-source` does for `pnpm start`), which points
 * each workspace package at its `src/`.
 */
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register(
  'data:text/javascript,export function resolve(specifier, context, next) {' +
    ' return next(specifier, { ...context, conditions: [...context.conditions, "mailroom-source"] }); }',
);
registerTsx();
await import('../packages/cli/src/bin.ts');
