import { compile, type SelectorDefinition } from 'html-to-text';

/** Headings keep their case: an all-caps greeting reads as shouting in a text part. */
const HEADINGS: SelectorDefinition[] = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
  selector,
  options: { uppercase: false },
}));

/**
 * The converter, compiled once: compiling the selectors costs far more than one conversion. Lines wrap at
 * 78 characters (RFC 5322's recommended line length), links show their URL in brackets unless the text is
 * the URL, images are skipped (an alt text out of context is noise), and hidden blocks (`display:none`,
 * as MJML's `mj-preview` and our preheader use) are left out.
 */
const convert = compile({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: '[style*="display:none"]', format: 'skip' },
    { selector: '[style*="display: none"]', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ...HEADINGS,
  ],
});

/**
 * Derives the plain-text alternative of a rendered HTML body, for content without its own text.
 *
 * @example htmlToText('<p>Hi <a href="https://x.test">there</a></p>') // 'Hi there [https://x.test]'
 */
export function htmlToText(html: string): string {
  return convert(html);
}
