import { createRequire } from 'node:module';
import { MailroomError } from '../base/errors.js';

/** One problem mjml's validator reports. */
interface MjmlIssue {
  line: number;
  message: string;
  tagName: string;
}

/** The subset of mjml's API used here (mjml ships no types). */
type Mjml2Html = (input: string, options: Record<string, unknown>) => Promise<{ html: string }>;

let mjml2html: Mjml2Html | undefined;

/** Loads mjml on first use: it takes about half a second, and most processes never compile MJML. */
function loadMjml(): Mjml2Html {
  if (mjml2html === undefined) {
    const require = createRequire(import.meta.url);
    mjml2html = require('mjml') as Mjml2Html;
  }
  return mjml2html;
}

/** `<mj-include>` reads files; mjml would silently drop it with includes ignored, so it is refused. */
const MJ_INCLUDE = /<mj-include[\s/>]/i;

/**
 * Compiles MJML to HTML, once per template version (it is far too slow to run per mailing, let alone per
 * recipient). Validation is strict, includes are refused, and neither minify nor beautify runs: minify
 * adds to that cost and could mangle Liquid.
 * Liquid tags inside components come out unchanged (see `compileTemplate` for the ones MJML drops).
 *
 * @param name Names the source in the message (a file name, `template welcome`). mjml's own message,
 *   which names the working directory, is only the `cause`.
 * @throws MailroomError `TEMPLATE_INVALID` listing each problem with its line and tag.
 */
export async function compileMjml(source: string, name = 'the template'): Promise<string> {
  const include = MJ_INCLUDE.exec(source);
  if (include !== null) {
    const line = source.slice(0, include.index).split('\n').length;
    throw new MailroomError(
      'TEMPLATE_INVALID',
      `Invalid MJML in ${name}: line ${line} <mj-include>: includes are not supported`,
    );
  }
  try {
    const { html } = await loadMjml()(source, {
      validationLevel: 'strict',
      ignoreIncludes: true,
      minify: false,
      beautify: false,
      keepComments: true,
    });
    return html;
  } catch (error) {
    throw new MailroomError('TEMPLATE_INVALID', `Invalid MJML in ${name}: ${describeMjmlError(error)}`, {
      cause: error,
    });
  }
}

function describeMjmlError(error: unknown): string {
  const issues = mjmlIssues(error);
  if (issues.length > 0) {
    return issues.map((issue) => `line ${issue.line} <${issue.tagName}>: ${issue.message}`).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/** mjml's `ValidationError` carries the validator's issues in `errors`. */
function mjmlIssues(error: unknown): MjmlIssue[] {
  if (typeof error !== 'object' || error === null || !('errors' in error) || !Array.isArray(error.errors)) {
    return [];
  }
  return error.errors.filter(
    (issue: unknown): issue is MjmlIssue =>
      typeof issue === 'object' &&
      issue !== null &&
      'line' in issue &&
      typeof issue.line === 'number' &&
      'message' in issue &&
      typeof issue.message === 'string' &&
      'tagName' in issue &&
      typeof issue.tagName === 'string',
  );
}
