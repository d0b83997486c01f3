/**
 * A plan-dependent lifecycle message (MJML): whole sections chosen with `{% if %}` / `{% elsif %}` /
 * `{% else %}` in `<mj-raw>`, and inline conditions inside the text.
 */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, pick, seeded } from './random.js';

const SOURCE = `<mjml>
  <mj-head>
    <mj-preview>{% if plan == "pro" %}Your Pro usage report{% else %}See what you could do with Pro{% endif %}</mj-preview>
  </mj-head>
  <mj-body background-color="#f7fafc">
    <mj-section background-color="#ffffff" padding="24px 0">
      <mj-column>
        <mj-text font-size="22px" font-weight="bold">Hi {{ recipient.firstName }}, your month on {{ workspace }}</mj-text>
        <mj-text font-size="15px" line-height="23px">
          Your team sent {{ sent_count }} messages this month{% if sent_count > 1000 %}, that is a new record{% endif %}.
          {% if seats > 1 %}{{ seats }} people share this workspace.{% else %}You are the only member of this workspace.{% endif %}
        </mj-text>
      </mj-column>
    </mj-section>
    <mj-raw>{% if plan == "pro" %}</mj-raw>
    <mj-section background-color="#ebf8ff" padding="20px 0">
      <mj-column>
        <mj-text font-size="18px" font-weight="bold">Your Pro features</mj-text>
        <mj-text font-size="15px" line-height="23px">
          Priority support answered {{ tickets | default: 0 }} of your tickets within the hour. Your audit log kept
          {{ audit_events }} events, and single sign-on is active for {{ sso_domain | default: "your domain" }}.
        </mj-text>
        <mj-button href="https://app.example.com/{{ workspace_id }}/reports">Open the usage report</mj-button>
      </mj-column>
    </mj-section>
    <mj-raw>{% elsif plan == "trial" %}</mj-raw>
    <mj-section background-color="#fffaf0" padding="20px 0">
      <mj-column>
        <mj-text font-size="18px" font-weight="bold">{{ trial_days_left }} days left in your trial</mj-text>
        <mj-text font-size="15px" line-height="23px">
          Keep everything you set up: choose a plan before your trial ends on {{ trial_ends }}.
          {% if trial_days_left < 3 %}After that, sending stops until you upgrade.{% endif %}
        </mj-text>
        <mj-button href="https://app.example.com/{{ workspace_id }}/billing?from=trial">Choose a plan</mj-button>
      </mj-column>
    </mj-section>
    <mj-raw>{% else %}</mj-raw>
    <mj-section background-color="#f0fff4" padding="20px 0">
      <mj-column>
        <mj-text font-size="18px" font-weight="bold">Do more with Pro</mj-text>
        <mj-text font-size="15px" line-height="23px">
          On the Free plan you can send up to 2,000 messages a month; you have used {{ sent_count }}.
          Pro adds priority support, an audit log and single sign-on, from 29 EUR a month.
        </mj-text>
        <mj-button href="https://app.example.com/{{ workspace_id }}/upgrade">Upgrade to Pro</mj-button>
      </mj-column>
    </mj-section>
    <mj-raw>{% endif %}</mj-raw>
    <mj-section padding="16px 0">
      <mj-column>
        <mj-text font-size="12px" color="#718096" align="center">
          You receive this because you are an admin of {{ workspace }}. <a href="https://app.example.com/{{ workspace_id }}/notifications">Notification settings</a>
        </mj-text>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

export const planMessage: CorpusTemplate = {
  ref: 'plan-message',
  description: 'MJML lifecycle message: {% if %} / {% elsif %} / {% else %} sections',
  format: 'mjml',
  subject: '{% if plan == "pro" %}Your Pro report{% else %}Your month on {{ workspace }}{% endif %}',
  source: SOURCE,
  globals: {},
  recipient(i) {
    const next = seeded(3, i);
    const who = person(next, i);
    const plan = pick(next, ['pro', 'trial', 'free', 'free']);
    const variables: Record<string, string | number> = {
      plan,
      workspace: `${who.first}'s <team>`,
      workspace_id: `ws_${i}`,
      sent_count: between(next, 0, 5000),
      seats: between(next, 1, 12),
      audit_events: between(next, 10, 90000),
      trial_days_left: between(next, 0, 14),
      trial_ends: `2026-04-${String(between(next, 1, 28)).padStart(2, '0')}`,
    };
    if (next() < 0.7) variables.tickets = between(next, 0, 40);
    if (next() < 0.5) variables.sso_domain = `team${i % 50}.example.org`;
    return { address: who.address, name: who.name, variables };
  },
};
