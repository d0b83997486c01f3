/** A plain-text-only message (no HTML part): an appointment reminder with a condition. */
import type { CorpusTemplate } from './corpus-types.js';
import { between, person, pick, seeded } from './random.js';

const SOURCE = `Hello {{ recipient.firstName }},

This is a reminder of your appointment with {{ practitioner }} on {{ date }} at {{ time }}.
{% if video %}It takes place by video: join at https://meet.example.com/{{ room }} a few minutes early.{% else %}Address: {{ address_line }}, {{ city }}.{% endif %}

Need to change it? Reply to this email or call {{ phone | default: "+44 20 7946 0000" }}.

-- 
Example Clinic`;

export const plainText: CorpusTemplate = {
  ref: 'plain-text',
  description: 'Text-only reminder (no HTML part)',
  format: 'text',
  subject: 'Reminder: {{ date }} at {{ time }}',
  source: SOURCE,
  globals: { address_line: '12 Harley Street', city: 'London' },
  recipient(i) {
    const next = seeded(5, i);
    const who = person(next, i);
    const variables: Record<string, string | boolean> = {
      practitioner: pick(next, ['Dr Okafor', 'Dr Müller', 'Dr Hopper']),
      date: `2026-04-${String(between(next, 1, 28)).padStart(2, '0')}`,
      time: `${between(next, 8, 17)}:${pick(next, ['00', '15', '30', '45'])}`,
      video: next() < 0.4,
      room: `room-${i}`,
    };
    if (next() < 0.3) variables.phone = '+44 20 7946 0123';
    return { address: who.address, name: who.name, variables };
  },
};
