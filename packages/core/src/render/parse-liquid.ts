import type { Liquid, Template } from 'liquidjs';
import { type LiquidEngineKind, liquidEngines } from './liquid-engine.js';
import { liquidFailure } from './liquid-error.js';

/**
 * Parses a Liquid source with the shared engine of `kind`. Parse once, render many times: parsing costs
 * about twenty times a render.
 *
 * @param part Names the source in the error message, for example `subject` or `html`.
 * @throws MailroomError `TEMPLATE_INVALID` naming the part, the problem and its line.
 */
export function parseLiquid(kind: LiquidEngineKind, source: string, part: string): Template[] {
  return parseLiquidWith(liquidEngines[kind], source, part);
}

/**
 * Parses a Liquid source with a given engine (one made by `createLiquidEngine`).
 *
 * @throws MailroomError `TEMPLATE_INVALID` naming the part, the problem and its line.
 */
export function parseLiquidWith(engine: Liquid, source: string, part: string): Template[] {
  try {
    return engine.parse(source);
  } catch (error) {
    throw liquidFailure('TEMPLATE_INVALID', part, error);
  }
}

/**
 * Checks that a Liquid source parses, for sources accepted now and rendered later (a request's subject,
 * preheader or message). The file tags (`include`, `render`, `layout`) and unknown filters are refused.
 *
 * @throws MailroomError `TEMPLATE_INVALID` naming the part, the problem and its line.
 */
export function assertLiquidSyntax(source: string, part = 'template'): void {
  parseLiquid('text', source, part);
}
