/**
 * A large HTML export of the kind ESP drag-and-drop editors produce (70 KB): nested layout tables, inline
 * styles on every cell, MSO conditional comments, a hidden preheader span with the first name, tracked
 * links carrying the contact id, a VIP-only block (`{% if %}`) and a grid of product cards.
 */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, pick, seeded } from './random.js';

const FONT = "font-family:'Helvetica Neue',Helvetica,Arial,sans-serif";
const track = (path: string) =>
  `https://click.example-esp.com/t/${path}?cid={{ contact_id }}&amp;utm_source=esp&amp;utm_medium=email&amp;utm_campaign=spring-sale`;

const spacer = (h: number) =>
  `<table role="presentation" border="0" cellpadding="0" cellspacing="0" width="100%" style="border-collapse:collapse;mso-table-lspace:0pt;mso-table-rspace:0pt"><tr><td height="${h}" style="height:${h}px;line-height:${h}px;font-size:1px;mso-line-height-rule:exactly">&nbsp;</td></tr></table>`;

function card(n: number): string {
  return `<td class="stack-column" width="33.33%" valign="top" style="padding:0 8px;${FONT}">
<table role="presentation" border="0" cellpadding="0" cellspacing="0" width="100%" style="border-collapse:collapse;background-color:#ffffff;border:1px solid #e2e8f0;border-radius:4px">
<tr><td align="center" style="padding:12px 12px 0 12px"><a href="${track(`product-${n}`)}" target="_blank" style="text-decoration:none"><img src="https://img.example-esp.com/spring/product-${n}.jpg" width="160" height="160" alt="Product ${n}" border="0" style="display:block;width:100%;max-width:160px;height:auto;border:0;outline:none;text-decoration:none"></a></td></tr>
<tr><td align="left" style="padding:10px 12px 0 12px;${FONT};font-size:15px;line-height:20px;color:#1a202c;font-weight:bold;mso-line-height-rule:exactly">Spring item number ${n}</td></tr>
<tr><td align="left" style="padding:4px 12px 0 12px;${FONT};font-size:13px;line-height:18px;color:#4a5568;mso-line-height-rule:exactly">Lightweight, made to last, and ${n % 2 ? 'now in four new colours' : 'back in stock in every size'}. Free returns for 60 days.</td></tr>
<tr><td align="left" style="padding:8px 12px 12px 12px;${FONT};font-size:16px;line-height:20px;color:#c53030;font-weight:bold">${(19 + n * 3).toFixed(2)} EUR <span style="color:#a0aec0;text-decoration:line-through;font-weight:normal;font-size:13px">${(29 + n * 3).toFixed(2)} EUR</span></td></tr>
<tr><td align="center" style="padding:0 12px 14px 12px">
<!--[if mso]><v:roundrect xmlns:v="urn:schemas-microsoft-com:vml" href="${track(`buy-${n}`)}" style="height:36px;v-text-anchor:middle;width:140px;" arcsize="10%" stroke="f" fillcolor="#2b6cb0"><w:anchorlock/><center><![endif]-->
<a href="${track(`buy-${n}`)}" target="_blank" style="background-color:#2b6cb0;border-radius:4px;color:#ffffff;display:inline-block;${FONT};font-size:14px;font-weight:bold;line-height:36px;text-align:center;text-decoration:none;width:140px;-webkit-text-size-adjust:none;mso-hide:all">Shop now</a>
<!--[if mso]></center></v:roundrect><![endif]-->
</td></tr>
</table>
</td>`;
}

function row(first: number): string {
  return `<tr><td style="padding:0 16px">
<!--[if mso]><table role="presentation" border="0" cellspacing="0" cellpadding="0" width="100%"><tr><![endif]-->
<table role="presentation" border="0" cellpadding="0" cellspacing="0" width="100%" style="border-collapse:collapse;mso-table-lspace:0pt;mso-table-rspace:0pt"><tr>
${[first, first + 1, first + 2].map(card).join('\n')}
</tr></table>
<!--[if mso]></tr></table><![endif]-->
${spacer(16)}
</td></tr>`;
}

function story(n: number): string {
  return `<tr><td style="padding:0 24px">
<table role="presentation" border="0" cellpadding="0" cellspacing="0" width="100%" style="border-collapse:collapse;background-color:#ffffff">
<tr><td valign="top" width="200" style="padding:16px"><a href="${track(`story-${n}`)}"><img src="https://img.example-esp.com/spring/story-${n}.jpg" width="200" alt="" style="display:block;border:0"></a></td>
<td valign="top" style="padding:16px 16px 16px 0;${FONT};font-size:14px;line-height:22px;color:#2d3748;mso-line-height-rule:exactly">
<p style="margin:0 0 8px 0;font-size:18px;line-height:24px;font-weight:bold;color:#1a202c">Customer story ${n}: how a small team shipped twice as often</p>
<p style="margin:0 0 8px 0">When the team behind this story started, every release took a week of checklists. They moved their
checks into the product, set up the spring workflow in an afternoon, and now ship every other day without the late nights.</p>
<p style="margin:0"><a href="${track(`story-${n}-read`)}" style="color:#2b6cb0;text-decoration:underline">Read the story</a></p>
</td></tr></table>
${spacer(12)}
</td></tr>`;
}

const SOURCE = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta http-equiv="X-UA-Compatible" content="IE=edge">
<title>Spring sale for {{ first_name | default: "you" }}</title>
<!--[if mso]><xml><o:OfficeDocumentSettings><o:AllowPNG/><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml><![endif]-->
<style type="text/css">
body,table,td,a{-webkit-text-size-adjust:100%;-ms-text-size-adjust:100%}
table,td{mso-table-lspace:0pt;mso-table-rspace:0pt}
img{-ms-interpolation-mode:bicubic;border:0;height:auto;line-height:100%;outline:none;text-decoration:none}
@media screen and (max-width:600px){.stack-column{display:block!important;width:100%!important;max-width:100%!important}.mobile-pad{padding:0 12px!important}}
</style>
</head>
<body style="margin:0;padding:0;background-color:#edf2f7;width:100%!important">
<span class="preheader" style="display:none;font-size:1px;color:#edf2f7;line-height:1px;max-height:0px;max-width:0px;opacity:0;overflow:hidden;mso-hide:all">{{ first_name | default: "Hi" }}, up to 40 % off until Sunday{% if vip %}, and early access for VIPs{% endif %}.</span>
<center style="width:100%;background-color:#edf2f7">
<!--[if mso | IE]><table role="presentation" border="0" cellpadding="0" cellspacing="0" width="640" align="center"><tr><td><![endif]-->
<table role="presentation" class="email-container" border="0" cellpadding="0" cellspacing="0" width="640" align="center" style="margin:0 auto;border-collapse:collapse;max-width:640px">
<tr><td align="center" style="padding:12px;${FONT};font-size:11px;color:#718096">Not displaying correctly? <a href="${track('web-version')}" style="color:#718096">View it in your browser</a></td></tr>
<tr><td align="center" style="background-color:#1a365d;padding:24px"><a href="${track('logo')}"><img src="https://img.example-esp.com/brand/logo-white.png" width="160" alt="Example Store" style="display:block;border:0"></a></td></tr>
<tr><td style="background-color:#ffffff;padding:32px 24px 8px 24px;${FONT};font-size:28px;line-height:34px;font-weight:bold;color:#1a202c;text-align:center">Spring sale, {{ first_name | default: "friend" }}: up to 40 % off</td></tr>
<tr><td style="background-color:#ffffff;padding:0 24px 24px 24px;${FONT};font-size:16px;line-height:24px;color:#4a5568;text-align:center">Everything for the new season, picked for shoppers in {{ city | default: "your city" }}. Member number {{ member_number }}: your {{ points }} points are worth {{ points | divided_by: 100 }} EUR at checkout.</td></tr>
{% if vip %}<tr><td style="background-color:#fefcbf;padding:16px 24px;${FONT};font-size:15px;line-height:22px;color:#744210;text-align:center"><strong>VIP early access:</strong> shop the sale a day early with code <strong>{{ vip_code }}</strong>. <a href="${track('vip')}" style="color:#744210">Start now</a></td></tr>{% endif %}
<tr><td style="background-color:#edf2f7">${spacer(20)}</td></tr>
${[1, 4, 7, 10, 13, 16, 19, 22].map(row).join('\n')}
${[1, 2, 3, 4].map(story).join('\n')}
<tr><td style="padding:24px;${FONT};font-size:12px;line-height:18px;color:#718096;text-align:center">
<p style="margin:0 0 8px 0">You are receiving this email because {{ email }} subscribed to Example Store news.</p>
<p style="margin:0 0 8px 0"><a href="${track('preferences')}" style="color:#718096">Update your preferences</a> · <a href="https://click.example-esp.com/unsubscribe?cid={{ contact_id }}" style="color:#718096">Unsubscribe</a></p>
<p style="margin:0">Example Store GmbH, Beispielstraße 1, 10115 Berlin, Germany</p>
</td></tr>
</table>
<!--[if mso | IE]></td></tr></table><![endif]-->
</center>
</body>
</html>`;

export const espExport: CorpusTemplate = {
  ref: 'esp-export',
  description: 'ESP-editor HTML export: 70 KB of tables and inline styles',
  format: 'html',
  subject: '{{ first_name | default: "Hello" }}, the spring sale is on',
  source: SOURCE,
  globals: {},
  recipient(i) {
    const next = seeded(6, i);
    const who = person(next, i);
    const variables: Record<string, string | number | boolean> = {
      contact_id: `c${(i * 40503) % 1000003}`,
      member_number: `M${String(i).padStart(7, '0')}`,
      points: between(next, 0, 20000),
      email: who.address,
      vip: next() < 0.2,
      vip_code: `VIP-${i.toString(36).toUpperCase()}`,
    };
    if (next() < 0.8) variables.first_name = who.first;
    if (next() < 0.6) variables.city = pick(next, ['Berlin', 'Köln', 'München', 'Hamburg']);
    return { address: who.address, name: who.name, variables };
  },
};
