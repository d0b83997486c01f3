import type { ReceivingSettingsView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';

/** What the receiving settings page shows: the settings, and after a save its notice or the refusal. */
export interface InboundSettingsListing {
  settings: ReceivingSettingsView;
  /** Shown after a save. */
  notice?: string;
  /** The refusal of a save (its fields' messages), shown above the form. */
  error?: string;
}

/**
 * A project's receiving settings (issue 40, `GET /inbound/settings`, `mailroom inbound settings`): what
 * applies (the project's value or the engine's default) and a form that changes them (a `full` key: the
 * dashboard's rule for every form). An empty field goes back to the default.
 */
export function inboundSettingsPage(ctx: PageContext, listing: InboundSettingsListing): SafeHtml {
  const s = listing.settings;
  const retentionDefault = s.defaults.retention_days === null ? 'kept' : `${s.defaults.retention_days} days`;
  const applies = (value: number | string | null, fallback: string, unit = '') =>
    value === null
      ? html`${fallback} <span class="muted">(the engine's default)</span>`
      : html`${value}${unit} <span class="muted">(this project's)</span>`;
  const facts = html`<div class="card"><dl class="facts"><dt>Retention</dt><dd data-setting="retention_days">${applies(s.retention_days, retentionDefault, ' days')}</dd><dt>Size cap</dt><dd data-setting="max_message_bytes">${applies(s.max_message_bytes, `${s.defaults.max_message_bytes} bytes`, ' bytes')}</dd><dt>Reply addresses</dt><dd data-setting="reply_domain">${
    s.reply_domain === null
      ? html`<span class="muted">off</span>`
      : html`<code>reply+&lt;delivery id&gt;@${s.reply_domain}</code>`
  }</dd><dt>Updated</dt><dd>${s.updated_at ? time(new Date(s.updated_at)) : html`<span class="muted">never</span>`}</dd></dl></div>`;
  const form = html`<form method="post" action="${ctx.root}/inbound/settings" class="card" data-settings-form>${csrfField(ctx)}<label for="retention_days">Retention (days; empty: ${retentionDefault})</label><input id="retention_days" name="retention_days" inputmode="numeric" value="${s.retention_days ?? ''}"><label for="max_message_bytes">Size cap (bytes; empty: ${s.defaults.max_message_bytes})</label><input id="max_message_bytes" name="max_message_bytes" inputmode="numeric" value="${s.max_message_bytes ?? ''}"><label for="reply_domain">Reply domain (empty: off; needs a route <code>reply+*</code> of this project on it)</label><input id="reply_domain" name="reply_domain" value="${s.reply_domain ?? ''}"><p><button type="submit" class="primary">Save</button></p></form>`;
  return layout(
    ctx,
    'Receiving settings',
    'inbound',
    html`<p class="muted"><a href="${ctx.root}/inbound">Inbound</a> /</p><h1>Receiving settings</h1>${
      listing.notice ? html`<p class="card" role="status">${listing.notice}</p>` : ''
    }${listing.error ? html`<p class="notice error" role="alert">${listing.error}</p>` : ''}${facts}<h2>Change</h2>${form}`,
  );
}
