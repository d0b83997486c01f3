import type { DnsRecordToPublish, DomainFinding, DomainView, DomainWarning } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { badge, time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';

/** What the Domains page shows. */
export interface DomainsPageData {
  domains: DomainView[];
  /** Unverified domains this server sent from under the `warn` policy. */
  warnings: DomainWarning[];
  /** A line to confirm what the last action did. */
  notice?: string;
}

/**
 * The project's sending domains: each one's state, the key mail is signed with, and its DNS records ready
 * to copy, each with what the last check saw of it; a "check now" button; and the unverified domains mail
 * was sent from.
 */
export function domainsPage(ctx: PageContext, data: DomainsPageData): SafeHtml {
  const warnings =
    data.warnings.length === 0
      ? ''
      : html`<h2>Sent from unverified domains</h2><table class="cards"><thead><tr><th>Domain</th><th>Why it is not verified</th><th>First sent</th></tr></thead><tbody>${data.warnings.map(
          (w) =>
            html`<tr><td data-label="Domain" class="mono">${w.domain}</td><td data-label="Why">${w.problem}</td><td data-label="First sent">${time(w.firstAt)}</td></tr>`,
        )}</tbody></table>`;
  const domains =
    data.domains.length === 0
      ? html`<p class="card muted">No sending domains. Add one with <code>mailroom domain add --project ID acme.com</code> or <code>POST /domains</code>: Mailroom makes its DKIM key and lists the records to publish.</p>`
      : data.domains.map((d) => domainCard(ctx, d));
  return layout(
    ctx,
    'Domains',
    'domains',
    html`<h1>Sending domains</h1>${data.notice ? html`<p class="card" role="status">${data.notice}</p>` : ''}${warnings}${domains}`,
  );
}

function domainCard(ctx: PageContext, d: DomainView): SafeHtml {
  const rows = d.records.map((r) => recordRow(r, findingOf(d.findings, r)));
  const problems = (d.findings ?? []).filter(
    (f) =>
      f.optional && f.state !== 'found' && !d.records.some((r) => r.kind === f.kind && r.name === f.name),
  );
  const signing = d.signingSelector
    ? html`<code>${d.signingSelector}</code>`
    : html`<span class="muted">none yet: mail is signed once a key's record is seen</span>`;
  return html`<section class="card" data-domain="${d.domain}"><h2><span class="mono">${d.domain}</span> ${badge(d.state)}${d.check === 'no-answer' ? html` ${badge('no-answer')}` : ''}</h2><dl class="facts"><dt>Signs with</dt><dd>${signing}</dd><dt>Last checked</dt><dd>${time(d.checkedAt)}</dd><dt>Next check</dt><dd>${time(d.nextCheckAt)}</dd>${d.returnPath ? html`<dt>Return path</dt><dd class="mono">${d.returnPath}</dd>` : ''}</dl><form method="post" action="${ctx.root}/domains/${encodeURIComponent(d.domain)}/verify">${csrfField(ctx)}<button type="submit" class="small">Check now</button></form><table class="cards"><thead><tr><th>Record</th><th>Name</th><th>Value</th><th>Seen</th></tr></thead><tbody>${rows}${problems.map((f) => findingRow(f))}</tbody></table></section>`;
}

function recordRow(r: DnsRecordToPublish, found: DomainFinding | undefined): SafeHtml {
  const priority = r.priority === undefined ? '' : `${r.priority} `;
  return html`<tr><td data-label="Record">${r.kind}<br><span class="muted">${r.type}</span></td><td data-label="Name" class="mono">${r.name} <button type="button" class="small" data-copy="${r.name}" aria-label="Copy the name">Copy</button></td><td data-label="Value"><code>${priority}${r.value}</code> <button type="button" class="small" data-copy="${r.value}" aria-label="Copy the value">Copy</button>${r.note ? html`<br><span class="muted">${r.note}</span>` : ''}</td><td data-label="Seen">${found ? html`${badge(found.state)}${found.problem ? html`<br><span class="muted">${found.problem}</span>` : ''}` : html`<span class="muted">not checked yet</span>`}</td></tr>`;
}

function findingRow(f: DomainFinding): SafeHtml {
  return html`<tr><td data-label="Record">${f.kind}<br><span class="muted">${f.type}</span></td><td data-label="Name" class="mono">${f.name}</td><td data-label="Value"><span class="muted">optional</span></td><td data-label="Seen">${badge(f.state)}${f.problem ? html`<br><span class="muted">${f.problem}</span>` : ''}</td></tr>`;
}

/** The finding of a record to publish: same kind and name (the SPF of the domain and of its return path differ by kind). */
function findingOf(findings: DomainFinding[] | null, r: DnsRecordToPublish): DomainFinding | undefined {
  return findings?.find((f) => f.kind === r.kind && f.name === r.name);
}
