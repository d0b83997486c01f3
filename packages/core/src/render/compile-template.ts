import { Tokenizer, TokenKind } from 'liquidjs';
import { MailroomError } from '../base/errors.js';
import type { TemplateFormat } from '../store/records.js';
import { compileMjml } from './compile-mjml.js';
import { parseLiquid } from './parse-liquid.js';

/**
 * Compiles a template source at creation time, once per version, and refuses a broken one.
 *
 * - `mjml`: compiled to HTML with strict validation; Liquid stays in the output, to be rendered per
 *   recipient. Liquid placed between MJML components (not inside `<mj-text>`, `<mj-raw>`, an attribute...)
 *   is discarded by MJML, which would silently change the template's logic: it is refused, with advice to
 *   wrap it in `<mj-raw>`. Liquid in `<mj-title>` is also copied into an attribute; that is safe since
 *   outputs are HTML-escaped.
 * - `html`, `text`: the source is the compiled form.
 *
 * Every format is parsed as Liquid (the source, and for MJML the compiled HTML too).
 *
 * @param name Names the source in error messages: the file it was read from, or `template <ref>`.
 * @throws MailroomError `TEMPLATE_INVALID` naming the source, the problem and its line (MJML: also the tag).
 */
export async function compileTemplate(
  format: TemplateFormat,
  source: string,
  name: string = format,
): Promise<{ compiled: string }> {
  parseLiquid(format === 'text' ? 'text' : 'html', source, name);
  if (format !== 'mjml') return { compiled: source };
  const compiled = await compileMjml(source, name);
  assertLiquidKept(source, compiled, name);
  parseLiquid('html', compiled, `${name} (compiled MJML)`);
  return { compiled };
}

interface LiquidToken {
  /** The tag or output, whitespace collapsed (MJML may reflow it). */
  text: string;
  line: number;
}

/** Refuses a compile that lost a Liquid tag or output present in the source. */
function assertLiquidKept(source: string, compiled: string, name: string): void {
  const available = new Map<string, number>();
  for (const token of liquidTokens(compiled)) available.set(token.text, (available.get(token.text) ?? 0) + 1);
  for (const token of liquidTokens(source)) {
    const left = available.get(token.text) ?? 0;
    if (left === 0) {
      throw new MailroomError(
        'TEMPLATE_INVALID',
        `Invalid MJML in ${name}: line ${token.line}: Liquid ${token.text} does not survive MJML compilation; Liquid placed between components is dropped: wrap it in <mj-raw>`,
      );
    }
    available.set(token.text, left - 1);
  }
}

function liquidTokens(source: string): LiquidToken[] {
  const tokens: LiquidToken[] = [];
  for (const token of new Tokenizer(source).readTopLevelTokens()) {
    if (token.kind !== TokenKind.Tag && token.kind !== TokenKind.Output) continue;
    tokens.push({ text: token.getText().replace(/\s+/g, ' '), line: token.getPosition()[0] ?? 0 });
  }
  return tokens;
}
