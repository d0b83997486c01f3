/**
 * An MJML newsletter as product teams send it: a preheader (`mj-preview`) with the first name and
 * `default:` filters, links personalized with the reader's id (`?u={{ user_id }}`), a greeting, three
 * articles, an offer with a coupon, a footer with a per-reader preferences link.
 */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, pick, seeded } from './random.js';

const ARTICLE = (n: number) => `
    <mj-section background-color="#ffffff" padding="20px 0">
      <mj-column width="40%">
        <mj-image src="https://cdn.example.com/img/article-${n}.png" alt="Article ${n} for {{ first_name | default: 'you' }}" width="200px" href="https://app.example.com/articles/${n}?u={{ user_id }}" />
      </mj-column>
      <mj-column width="60%">
        <mj-text font-size="18px" font-weight="bold" color="#1f2d3d">What's new in part ${n} of our product series</mj-text>
        <mj-text font-size="14px" line-height="22px" color="#4a5568">
          We have spent the last quarter rebuilding the parts of the product that you use the most. Reports now load in
          under a second, exports keep their formatting, and the new audit trail shows who changed what and when.
          Teams like yours told us that the old dashboard made it hard to see the week at a glance, so we redesigned it
          around the three numbers that matter: what came in, what went out, and what is still waiting.
        </mj-text>
        <mj-text font-size="14px" line-height="22px" color="#4a5568">
          As a customer on the {{ plan | default: "Free" }} plan, all of this is already switched on for {{ company | default: "your team" }}.
          Read the full story on our blog, with screenshots and a short video tour of every change.
        </mj-text>
        <mj-button background-color="#2b6cb0" color="#ffffff" href="https://app.example.com/blog/part-${n}?u={{ user_id }}&amp;src=newsletter">Read part ${n}</mj-button>
      </mj-column>
    </mj-section>`;

const SOURCE = `<mjml>
  <mj-head>
    <mj-title>{{ month }} at Example</mj-title>
    <mj-preview>{{ first_name | default: "Hi there" }}, your {{ month | default: "monthly" }} update: {{ points | default: 0 }} points and what is new</mj-preview>
    <mj-attributes>
      <mj-all font-family="Helvetica, Arial, sans-serif" />
      <mj-text padding="8px 25px" />
    </mj-attributes>
    <mj-style>
      .footer a { color: #718096; text-decoration: underline; }
      .highlight { background-color: #fefcbf; padding: 2px 4px; }
    </mj-style>
  </mj-head>
  <mj-body background-color="#edf2f7" width="640px">
    <mj-section background-color="#1a365d" padding="24px 0">
      <mj-column>
        <mj-image src="https://cdn.example.com/img/logo-white.png" alt="Example" width="140px" href="https://app.example.com/?u={{ user_id }}" />
        <mj-text align="center" color="#ffffff" font-size="13px">Example monthly update · <a href="https://app.example.com/whats-new?u={{ user_id }}" style="color:#ffffff">View in browser</a></mj-text>
      </mj-column>
    </mj-section>
    <mj-section background-color="#ffffff" padding="32px 0 12px">
      <mj-column>
        <mj-text font-size="26px" font-weight="bold" color="#1a202c">Hello {{ first_name | default: "there" }}, here is your {{ month }} update</mj-text>
        <mj-text font-size="15px" line-height="24px" color="#2d3748">
          Thank you for being with us. Your {{ plan | default: "Free" }} subscription for {{ company | default: "your team" }} renews on {{ renewal_date }},
          and you have collected {{ points | default: 0 }} loyalty points so far this year. Below you will find what changed in
          the product this month, two stories from customers, and an offer that is yours until the end of the month.
          See everything at <a href="https://app.example.com/whats-new?u={{ user_id }}">what's new</a>.
        </mj-text>
      </mj-column>
    </mj-section>
    ${[1, 2, 3].map(ARTICLE).join('\n')}
    <mj-section background-color="#fffff0" padding="24px 0">
      <mj-column>
        <mj-text font-size="20px" font-weight="bold" color="#744210">An offer for {{ company | default: "you" }}</mj-text>
        <mj-text font-size="15px" line-height="24px" color="#744210">
          Upgrade before {{ renewal_date }} and get three months free. Use the code <span class="highlight">{{ coupon_code }}</span>
          at checkout, or simply reply to this email and our team will apply it for you.
        </mj-text>
        <mj-button background-color="#d69e2e" color="#1a202c" href="https://app.example.com/upgrade?code={{ coupon_code }}&amp;u={{ user_id }}">Claim the offer</mj-button>
      </mj-column>
    </mj-section>
    <mj-section padding="24px 0">
      <mj-column>
        <mj-divider border-color="#cbd5e0" border-width="1px" />
        <mj-text css-class="footer" align="center" font-size="12px" color="#718096" line-height="18px">
          Example Inc., 1 Example Street, Springfield. You receive this email as {{ recipient.address }} because you are a customer of Example.
          <a href="https://app.example.com/preferences?u={{ user_id }}">Email preferences</a> · <a href="https://app.example.com/unsubscribe?u={{ user_id }}">Unsubscribe</a>
        </mj-text>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

const PLANS = ['Starter', 'Team', 'Business', 'Enterprise'];

export const newsletter: CorpusTemplate = {
  ref: 'newsletter',
  description: 'MJML newsletter: personalized links, preheader with default filters',
  format: 'mjml',
  subject: 'Your {{ month }} update, {{ first_name | default: "friend" }}',
  source: SOURCE,
  globals: { month: 'March' },
  recipient(i) {
    const next = seeded(1, i);
    const who = person(next, i);
    const variables: Record<string, string | number> = {
      user_id: `u_${(i * 2654435761) % 4294967296}`,
      renewal_date: `2026-0${between(next, 1, 9)}-${String(between(next, 1, 28)).padStart(2, '0')}`,
      coupon_code: `SPRING-${(i * 7919).toString(36).toUpperCase()}`,
    };
    // Some recipients lack the optional fields: the `default:` filters fill them in.
    if (next() < 0.85) variables.first_name = who.first;
    if (next() < 0.9) variables.plan = pick(next, PLANS);
    if (next() < 0.8) variables.company = `Company ${i % 997} & Sons`;
    if (next() < 0.9) variables.points = between(next, 0, 5000);
    return { address: who.address, name: who.name, variables };
  },
};
