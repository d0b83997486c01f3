/**
 * The benchmark's newsletter: an MJML template of a typical shape (header, hero, three articles, an
 * offer, a footer) with five per-recipient variables (`company`, `plan`, `renewalDate`, `couponCode`,
 * `points`) besides the recipient's name and one global (`month`).
 */
import type { Variables } from '@mailroom/core';

const ARTICLE = (n: number) => `
    <mj-section background-color="#ffffff" padding="20px 0">
      <mj-column width="40%">
        <mj-image src="https://cdn.acme.test/img/article-${n}.png" alt="Article ${n}" width="200px" />
      </mj-column>
      <mj-column width="60%">
        <mj-text font-size="18px" font-weight="bold" color="#1f2d3d">What's new in part ${n} of our ${n === 1 ? 'spring' : 'product'} series</mj-text>
        <mj-text font-size="14px" line-height="22px" color="#4a5568">
          We have spent the last quarter rebuilding the parts of the product that you use the most. Reports now load in
          under a second, exports keep their formatting, and the new audit trail shows who changed what and when.
          Teams like yours told us that the old dashboard made it hard to see the week at a glance, so we redesigned it
          around the three numbers that matter: what came in, what went out, and what is still waiting.
        </mj-text>
        <mj-text font-size="14px" line-height="22px" color="#4a5568">
          As a customer on the {{ plan }} plan, all of this is already switched on for {{ company }}. Read the full
          story on our blog, with screenshots and a short video tour of every change.
        </mj-text>
        <mj-button background-color="#2b6cb0" color="#ffffff" href="https://acme.test/blog/part-${n}">Read part ${n}</mj-button>
      </mj-column>
    </mj-section>`;

/** The MJML source (Liquid inside), compiled once by `createTemplate`. */
export const NEWSLETTER_MJML = `<mjml>
  <mj-head>
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
        <mj-image src="https://cdn.acme.test/img/logo-white.png" alt="Acme" width="140px" />
        <mj-text align="center" color="#ffffff" font-size="13px">Acme monthly update</mj-text>
      </mj-column>
    </mj-section>
    <mj-section background-color="#ffffff" padding="32px 0 12px">
      <mj-column>
        <mj-text font-size="26px" font-weight="bold" color="#1a202c">Hello {{ recipient.firstName }}, here is your {{ month }} update</mj-text>
        <mj-text font-size="15px" line-height="24px" color="#2d3748">
          Thank you for being with us. Your {{ plan }} subscription for {{ company }} renews on {{ renewalDate }},
          and you have collected {{ points }} loyalty points so far this year. Below you will find what changed in
          the product this month, two stories from customers, and an offer that is yours until the end of the month.
        </mj-text>
      </mj-column>
    </mj-section>
    ${[1, 2, 3].map(ARTICLE).join('\n')}
    <mj-section background-color="#fffff0" padding="24px 0">
      <mj-column>
        <mj-text font-size="20px" font-weight="bold" color="#744210">An offer for {{ company }}</mj-text>
        <mj-text font-size="15px" line-height="24px" color="#744210">
          Upgrade before {{ renewalDate }} and get three months free. Use the code <span class="highlight">{{ couponCode }}</span>
          at checkout, or simply reply to this email and our team will apply it for you.
        </mj-text>
        <mj-button background-color="#d69e2e" color="#1a202c" href="https://acme.test/upgrade?code={{ couponCode }}">Claim the offer</mj-button>
      </mj-column>
    </mj-section>
    <mj-section padding="24px 0">
      <mj-column>
        <mj-divider border-color="#cbd5e0" border-width="1px" />
        <mj-text css-class="footer" align="center" font-size="12px" color="#718096" line-height="18px">
          Acme Inc., 1 Example Street, Springfield. You receive this email because you are a customer of Acme.
          <a href="https://acme.test/preferences">Email preferences</a> · <a href="https://acme.test/unsubscribe">Unsubscribe</a>
        </mj-text>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

const PLANS = ['Starter', 'Team', 'Business', 'Enterprise'];

/** The five variables of recipient `i`. */
export function newsletterVariables(i: number): Variables {
  return {
    company: `Company ${i % 997}`,
    plan: PLANS[i % PLANS.length] as string,
    renewalDate: `2026-0${(i % 9) + 1}-${String((i % 27) + 1).padStart(2, '0')}`,
    couponCode: `SPRING-${(i * 7919).toString(36).toUpperCase()}`,
    points: (i * 37) % 5000,
  };
}
