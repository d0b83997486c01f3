import { isMailroomError } from '../base/errors.js';
import type { TemplateFormat } from '../store/records.js';
// The modules themselves, not the render index: the preview thread loads this file on its first check.
import { compileTemplate } from './compile-template.js';
import { assertLiquidSyntax } from './parse-liquid.js';

/** A problem of a template source or subject, with where it is. */
export interface TemplateProblem {
  /** The field the problem is in. */
  field: 'source' | 'subject';
  /** 1-based line in that field, when the checker says. */
  line: number | null;
  /** 1-based column, when the checker says (Liquid does). */
  column: number | null;
  message: string;
}

/** What checking a template found: its compiled form when it compiles, and every problem seen. */
export interface TemplateCheckResult {
  /** The compiled source (MJML compiled to HTML), or null when the source has a problem. */
  compiled: string | null;
  problems: TemplateProblem[];
}

/**
 * Compiles a template's source and parses its subject, collecting the problems instead of throwing, each
 * with the field and line it is at: MJML validation lists every problem with its line and tag; Liquid
 * stops at the first syntax error of a part (liquidjs parses no further).
 *
 * @param name Names the source in the messages, for example `template welcome`.
 */
export async function checkTemplate(
  format: TemplateFormat,
  source: string,
  subject: string | null,
  name: string,
): Promise<TemplateCheckResult> {
  const problems: TemplateProblem[] = [];
  let compiled: string | null = null;
  try {
    compiled = (await compileTemplate(format, source, name)).compiled;
  } catch (error) {
    problems.push(...problemsOf(error, 'source'));
  }
  if (subject !== null && subject !== '') {
    try {
      assertLiquidSyntax(subject, `subject of ${name}`);
    } catch (error) {
      problems.push(...problemsOf(error, 'subject'));
    }
  }
  return { compiled: problems.length === 0 ? compiled : null, problems };
}

// liquidjs ends its messages with `, line:N, col:M`; the MJML checks say `line N`.
const LIQUID_POSITION = /line:(\d+), col:(\d+)/;
const MJML_LINE = /\bline (\d+)\b/;

/** The problems a failed compile reports; anything but `TEMPLATE_INVALID` is a fault and is rethrown. */
function problemsOf(error: unknown, field: TemplateProblem['field']): TemplateProblem[] {
  if (!isMailroomError(error) || error.code !== 'TEMPLATE_INVALID') throw error;
  const mjml = mjmlIssues(error.cause);
  if (mjml.length > 0) {
    return mjml.map((issue) => ({
      field,
      line: issue.line,
      column: null,
      message: `line ${issue.line} <${issue.tagName}>: ${issue.message}`,
    }));
  }
  const liquid = LIQUID_POSITION.exec(error.message);
  if (liquid) return [{ field, line: Number(liquid[1]), column: Number(liquid[2]), message: error.message }];
  const line = MJML_LINE.exec(error.message);
  return [{ field, line: line ? Number(line[1]) : null, column: null, message: error.message }];
}

/** mjml's `ValidationError` (the `cause` of the compile error) lists its issues in `errors`. */
function mjmlIssues(cause: unknown): Array<{ line: number; message: string; tagName: string }> {
  if (typeof cause !== 'object' || cause === null || !('errors' in cause) || !Array.isArray(cause.errors)) {
    return [];
  }
  return cause.errors.filter(
    (issue: unknown): issue is { line: number; message: string; tagName: string } =>
      typeof issue === 'object' &&
      issue !== null &&
      typeof (issue as { line?: unknown }).line === 'number' &&
      typeof (issue as { message?: unknown }).message === 'string' &&
      typeof (issue as { tagName?: unknown }).tagName === 'string',
  );
}
