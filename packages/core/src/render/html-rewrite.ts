/**
 * A change of one recipient's rendered HTML that a capability prepared once per mailing (tracking: links
 * and the open pixel). Rendering applies it without knowing what it does, so `render/` depends on no
 * capability.
 */
export interface HtmlRewrite {
  /** Derive the text part from the rewritten HTML (its links rewritten too) instead of the original. */
  readonly textFromRewritten: boolean;
  /** The rewritten HTML, and the original for the text part (built only if asked for). */
  apply(html: string): { html: string; plain: () => string };
}
