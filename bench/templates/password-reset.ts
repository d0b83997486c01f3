/** A short transactional message: a password reset link whose whole URL is a variable. */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, seeded } from './random.js';

const SOURCE = `<p>Hi {{ recipient.firstName }},</p>
<p>Someone (hopefully you) asked to reset the password of your Example account {{ recipient.address }}.</p>
<p><a href="{{ reset_url }}" style="background:#2563eb;color:#ffffff;padding:10px 16px;border-radius:4px;text-decoration:none">Choose a new password</a></p>
<p>The link works for {{ expires_minutes }} minutes. The request came from {{ ip }} ({{ location | default: "unknown location" }}).
If it was not you, ignore this email: your password stays the same.</p>
<p style="color:#6b7280;font-size:12px">Example Inc. · <a href="https://app.example.com/security">Security tips</a></p>`;

export const passwordReset: CorpusTemplate = {
  ref: 'password-reset',
  description: 'HTML password reset: short, the link is a variable',
  format: 'html',
  subject: 'Reset your Example password',
  source: SOURCE,
  globals: {},
  recipient(i) {
    const next = seeded(4, i);
    const who = person(next, i);
    const token = `${(i * 2654435761).toString(36)}${Math.floor(next() * 1e9).toString(36)}`;
    const variables: Record<string, string | number> = {
      reset_url: `https://app.example.com/reset?token=${token}&u=${i}`,
      expires_minutes: between(next, 15, 60),
      ip: `198.51.100.${between(next, 1, 254)}`,
    };
    if (next() < 0.6) variables.location = 'Lisbon, Portugal';
    return { address: who.address, name: who.name, variables };
  },
};
