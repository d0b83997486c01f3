/**
 * An order receipt (HTML, tables and inline styles): a `{% for %}` loop over each recipient's own line
 * items, with their links, a total, and the order's link.
 */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, pick, seeded } from './random.js';

const SOURCE = `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>Your receipt {{ order_id }}</title>
<style>td { font-family: Helvetica, Arial, sans-serif; }</style>
</head>
<body style="margin:0;padding:0;background:#f4f4f5">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5">
  <tr><td align="center" style="padding:24px">
    <table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:6px">
      <tr><td style="padding:24px 32px;font-size:22px;font-weight:bold;color:#111827">Thanks for your order, {{ recipient.firstName }}!</td></tr>
      <tr><td style="padding:0 32px 16px;font-size:14px;color:#4b5563">Order <a href="https://shop.example.com/orders/{{ order_id }}" style="color:#2563eb">{{ order_id }}</a> placed on {{ ordered_on }}. We will email you again when it ships to {{ shipping.city }}, {{ shipping.country }}.</td></tr>
      <tr><td style="padding:0 32px">
        <table role="presentation" width="100%" cellpadding="6" cellspacing="0" style="border-collapse:collapse;font-size:14px;color:#111827">
          <tr style="border-bottom:1px solid #e5e7eb"><th align="left">Item</th><th align="right">Qty</th><th align="right">Price</th></tr>
          {% for item in items %}
          <tr style="border-bottom:1px solid #f3f4f6">
            <td><a href="https://shop.example.com/p/{{ item.sku }}" style="color:#111827;text-decoration:none">{{ item.name }}</a>{% if item.gift %} <span style="color:#059669">(gift)</span>{% endif %}</td>
            <td align="right">{{ item.qty }}</td>
            <td align="right">{{ item.price | times: item.qty | round: 2 }} {{ currency }}</td>
          </tr>
          {% endfor %}
          <tr><td colspan="2" align="right" style="font-weight:bold">Total</td><td align="right" style="font-weight:bold">{{ total }} {{ currency }}</td></tr>
        </table>
      </td></tr>
      <tr><td style="padding:24px 32px;font-size:13px;color:#6b7280">Questions? Reply to this email or visit <a href="https://shop.example.com/help?order={{ order_id }}">our help centre</a>.</td></tr>
    </table>
  </td></tr>
</table>
</body>
</html>`;

const PRODUCTS = [
  ['Espresso beans 1 kg', 24.5],
  ['Ceramic mug', 12],
  ['Pour-over kettle', 49.99],
  ['Paper filters (100)', 4.25],
  ['Burr grinder', 129],
  ['Travel tumbler', 19.95],
  ['Gift card', 50],
] as const;
const CITIES = [
  ['Lyon', 'France'],
  ['Leeds', 'United Kingdom'],
  ['Porto', 'Portugal'],
  ['Graz', 'Austria'],
] as const;

export const receipt: CorpusTemplate = {
  ref: 'receipt',
  description: 'HTML receipt: {% for %} over per-recipient line items',
  format: 'html',
  subject: 'Your receipt {{ order_id }}',
  source: SOURCE,
  globals: { currency: 'EUR' },
  recipient(i) {
    const next = seeded(2, i);
    const who = person(next, i);
    const count = between(next, 1, 6);
    let total = 0;
    const items = Array.from({ length: count }, (_, k) => {
      const [name, price] = pick(next, PRODUCTS);
      const qty = between(next, 1, 3);
      total += price * qty;
      return { sku: `sku-${i % 500}-${k}`, name, qty, price, gift: next() < 0.15 };
    });
    const [city, country] = pick(next, CITIES);
    return {
      address: who.address,
      name: who.name,
      variables: {
        order_id: `A-${100000 + i}`,
        ordered_on: `2026-03-${String(between(next, 1, 28)).padStart(2, '0')}`,
        shipping: { city, country },
        items,
        total: Math.round(total * 100) / 100,
      },
    };
  },
};
