import type { NeutralResponse } from '../../neutral/types.js';
import { html, raw, type SafeHtml } from '../html.js';
import type { ContactPageStrings } from './strings/index.js';
import { fill } from './strings/index.js';

/**
 * The frame of every page a project's contacts see (the preference centre; the signup confirmation pages
 * reuse it): the project's name, colour and logo, the language of the strings, no script, and nothing
 * loaded from anywhere (the CSP allows inline style and `data:` images only, and no referrer is sent, so
 * the token in the URL goes nowhere).
 */

/** How the project looks on the page. */
export interface ContactBrand {
  /** The project's text: escaped. */
  projectName: string;
  /** `#rrggbb` (checked when stored), or null for the default. */
  color: string | null;
  /** A `data:image/...;base64,` URI (checked when stored), or null. */
  logo: string | null;
}

/** The headers of every contact page. */
export const CONTACT_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-robots-tag': 'noindex',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
} as const;

const DEFAULT_COLOR = '#1f4fd1';
const HEX = /^#[0-9a-fA-F]{6}$/;
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/;

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

function contrast(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/**
 * The accent colours: the brand colour on buttons with white or near-black text, whichever contrasts more;
 * where the colour itself is text or a border on white and contrasts less than 4.5:1 (WCAG AA), the
 * default text colour instead.
 */
export function accentOf(color: string | null): { accent: string; onAccent: string; ink: string } {
  const accent = color && HEX.test(color) ? color.toLowerCase() : DEFAULT_COLOR;
  const l = luminance(accent);
  const onAccent = contrast(l, 1) >= contrast(l, luminance('#111111')) ? '#ffffff' : '#111111';
  const ink = contrast(l, 1) >= 4.5 ? accent : '#1a1a1a';
  return { accent, onAccent, ink };
}

function styleOf(color: string | null): string {
  const { accent, onAccent, ink } = accentOf(color);
  return (
    `:root{--accent:${accent};--on-accent:${onAccent};--ink:${ink}}` +
    '*{box-sizing:border-box}body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f4f4f2;color:#1a1a1a}' +
    'main{max-width:34rem;margin:0 auto;padding:1.5rem 1rem 3rem}' +
    '.card{background:#fff;border-radius:10px;padding:1.5rem;border-top:6px solid var(--accent);margin-top:1rem}' +
    'header{display:flex;align-items:center;gap:.75rem;padding-top:1rem}header img{max-height:48px;max-width:160px}' +
    'header .project{font-weight:600;font-size:1.1rem}h1{font-size:1.4rem;margin:0 0 .5rem}' +
    'fieldset{border:1px solid #c9c9c4;border-radius:8px;margin:1rem 0;padding:.75rem 1rem}' +
    'legend{font-weight:600;padding:0 .25rem}.topic{display:flex;gap:.75rem;align-items:flex-start;padding:.6rem 0}' +
    '.topic+.topic{border-top:1px solid #e6e6e1}.topic input{width:1.35rem;height:1.35rem;margin:.15rem 0 0;flex:none;accent-color:var(--accent)}' +
    '.topic label{cursor:pointer}.topic .name{display:block;font-weight:600}.topic .desc{display:block;color:#4a4a4a;font-size:.95rem}' +
    'button{font:inherit;min-height:2.75rem;padding:.6rem 1.2rem;border-radius:6px;cursor:pointer;border:2px solid var(--accent);background:var(--accent);color:var(--on-accent)}' +
    'button.secondary{background:#fff;color:#1a1a1a;border-color:#1a1a1a}' +
    'button:focus-visible,input:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px;box-shadow:0 0 0 5px #fff}' +
    '.status{padding:.75rem 1rem;border-radius:6px;background:#eef6ee;border:1px solid #2d6a2d;color:#1a3d1a}' +
    '.status.warn{background:#fdf3e6;border-color:#8a5300;color:#4d2e00}.muted{color:#4a4a4a;font-size:.9rem}' +
    'a{color:var(--ink)}@media (max-width:30rem){main{padding:1rem .5rem 2rem}.card{padding:1rem}button{width:100%}}'
  );
}

/** A whole contact page around `content`, in the language of `strings`. */
export function contactPage(
  strings: ContactPageStrings,
  brand: ContactBrand,
  title: string,
  content: SafeHtml,
): SafeHtml {
  const logo = brand.logo && DATA_IMAGE.test(brand.logo) ? brand.logo : null;
  // The name is beside the logo, so the image is decorative (empty alt).
  const header = html`<header>${logo ? html`<img src="${logo}" alt="">` : ''}<span class="project">${brand.projectName}</span></header>`;
  return html`<!doctype html><html lang="${strings.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${title} · ${brand.projectName}</title><style>${raw(styleOf(brand.color))}</style></head><body><main>${header}<div class="card">${content}</div></main></body></html>`;
}

/** A contact page with the error's words (invalid link, erased contact), and the status line. */
export function contactErrorPage(
  strings: ContactPageStrings,
  brand: ContactBrand,
  status: number,
  requestId: string,
  title: string,
  text: string,
): SafeHtml {
  const line = fill(strings.errorStatus, { status: String(status), request: requestId });
  return contactPage(
    strings,
    brand,
    title,
    html`<h1>${title}</h1><p>${text}</p><p class="muted">${line}</p>`,
  );
}

/** The response of a contact page. */
export function contactResponse(status: number, requestId: string, page: SafeHtml): NeutralResponse {
  return { status, headers: { ...CONTACT_PAGE_HEADERS, 'x-request-id': requestId }, body: page.value };
}

/** `a***@example.com`: enough for the owner to recognize, not the whole address for whoever the link reaches. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address.slice(0, 1)}***${address.slice(at)}`;
}
