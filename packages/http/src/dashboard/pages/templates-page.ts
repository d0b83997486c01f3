import type { RenderedContent, TemplateView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';
import { query, templateUrl } from '../urls.js';

/** The project's templates. */
export function templatesPage(ctx: PageContext, templates: TemplateView[]): SafeHtml {
  const rows = templates.map(
    (t) =>
      html`<tr><td data-label="Ref"><a href="${templateUrl(ctx.root, t.ref)}"><code>${t.ref}</code></a></td><td data-label="Format">${t.format}</td><td data-label="Subject">${t.subject ?? ''}</td><td data-label="Version">${t.version}</td><td data-label="Updated">${time(t.updatedAt)}</td></tr>`,
  );
  const table =
    templates.length === 0
      ? html`<p class="card muted">No templates yet.</p>`
      : html`<table class="cards"><thead><tr><th>Ref</th><th>Format</th><th>Subject</th><th>Version</th><th>Updated</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout(ctx, 'Templates', 'templates', html`<h1>Templates</h1>${table}`);
}

/** The sample a preview is rendered with, as the form holds it. */
export interface TemplateSampleForm {
  /** The variables as typed (JSON). */
  variables: string;
  name: string;
  address: string;
}

/** One template: its source, and a preview rendered from the sample in the form. */
export function templatePage(
  ctx: PageContext,
  template: TemplateView,
  sample: TemplateSampleForm,
  rendered: RenderedContent | { error: string },
): SafeHtml {
  const self = templateUrl(ctx.root, template.ref);
  const previewSrc = `${self}/preview${query({ variables: sample.variables, name: sample.name, address: sample.address })}`;
  const result =
    'error' in rendered
      ? html`<p class="notice error" role="alert">${rendered.error}</p>`
      : html`<div class="card"><dl class="facts"><dt>Subject</dt><dd>${rendered.subject}</dd></dl></div>${
          rendered.html !== null &&
          html`<iframe class="preview" title="Template preview" sandbox="" referrerpolicy="no-referrer" src="${previewSrc}"></iframe>`
        }<details${rendered.html === null ? html` open` : ''}><summary>Text version</summary><pre>${rendered.text}</pre></details>`;
  return layout(
    ctx,
    template.ref,
    'templates',
    html`<p class="muted"><a href="${ctx.root}/templates">Templates</a> /</p><h1>${template.ref}</h1><div class="card"><dl class="facts"><dt>Format</dt><dd>${template.format}</dd><dt>Subject</dt><dd>${template.subject ?? '—'}</dd><dt>Version</dt><dd>${template.version}</dd><dt>Updated</dt><dd>${time(template.updatedAt)}</dd></dl></div><div class="grid2"><form method="get" action="${self}" class="card"><h2>Sample</h2><label for="variables">Variables (JSON object)</label><textarea id="variables" name="variables" spellcheck="false">${sample.variables}</textarea><label for="name">Recipient name</label><input id="name" name="name" value="${sample.name}"><label for="address">Recipient address</label><input id="address" name="address" value="${sample.address}"><p><button type="submit" class="primary">Preview</button></p></form><div><h2>Source</h2><pre>${template.source}</pre></div></div><h2>Preview</h2>${result}`,
  );
}
