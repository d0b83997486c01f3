import { BOUNCE_REASONS, type DomainBounces, isBounceReason } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';

/** Reasons shown per domain; the rest are summed up in the counts. */
const REASONS_SHOWN = 4;

/**
 * Bounces by destination domain: recipient-hard, soft and sender-side apart, with the main reasons
 * (their meaning on hover). Many sender-side refusals at one domain say that it refuses the sender
 * (authentication, IP reputation, rate), not the recipients: nothing is suppressed for them. Nothing
 * when there is no bounce.
 */
export function bouncesSection(domains: readonly DomainBounces[], scope: string): SafeHtml {
  if (domains.length === 0) return html``;
  const rows = domains.map((d) => {
    const reasons = d.reasons.slice(0, REASONS_SHOWN).map((r) => {
      const meaning = isBounceReason(r.reason) ? BOUNCE_REASONS[r.reason].description : '';
      return html`<li data-reason="${r.reason}" data-class="${r.class}"><code title="${meaning}">${r.reason}</code> ${r.count}</li>`;
    });
    return html`<tr data-domain="${d.domain}"><td data-label="Destination" class="mono">${d.domain}</td><td data-label="Sender-side" data-sender-side>${d.senderSide}</td><td data-label="Recipient-hard" data-recipient-hard>${d.recipientHard}</td><td data-label="Soft" data-soft>${d.soft}</td><td data-label="Reasons"><ul class="plain">${reasons}</ul></td></tr>`;
  });
  return html`<h2>Bounces by destination</h2><div class="card" data-bounces><table class="cards"><thead><tr><th>Destination</th><th>Sender-side</th><th>Recipient-hard</th><th>Soft</th><th>Reasons</th></tr></thead><tbody>${rows}</tbody></table><p class="muted">${scope} Sender-side: the destination refused the sender (authentication, IP reputation, rate, content); the addresses are not suppressed for it. Recipient-hard: the address does not exist (suppressed). Soft: counted, suppressed after several in a row.</p></div>`;
}
