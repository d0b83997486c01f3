/**
 * The template corpus of `bench delivery-corpus` and of the text-derivation tests: realistic templates
 * of different shapes, each with a deterministic generator of 100,000 recipients.
 */
import type { CorpusTemplate } from './corpus-types.js';
import { espExport } from './esp-export.js';
import { newsletter } from './newsletter.js';
import { passwordReset } from './password-reset.js';
import { plainText } from './plain-text.js';
import { planMessage } from './plan-message.js';
import { receipt } from './receipt.js';

export type { CorpusRecipient, CorpusTemplate } from './corpus-types.js';

/** Every corpus template, in report order. */
export const CORPUS: readonly CorpusTemplate[] = [
  newsletter,
  receipt,
  planMessage,
  passwordReset,
  plainText,
  espExport,
];

/** The corpus template of `ref`. */
export function corpusTemplate(ref: string): CorpusTemplate {
  const found = CORPUS.find((t) => t.ref === ref);
  if (!found) throw new Error(`no corpus template ${ref}; have ${CORPUS.map((t) => t.ref).join(', ')}`);
  return found;
}
