/**
 * Deterministic pseudo-random numbers for the corpus generators: recipient `i` of a template always gets
 * the same variables, in any process, without storing 100,000 rows.
 */

/** A generator seeded by a template's salt and a recipient index (mulberry32). */
export function seeded(salt: number, i: number): () => number {
  let state = (Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of `items`, by the generator. */
export function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

/** An integer in [min, max]. */
export function between(next: () => number, min: number, max: number): number {
  return min + Math.floor(next() * (max - min + 1));
}

export const FIRST_NAMES = [
  'Ada',
  'Grace',
  'Linus',
  'Margaret',
  'Alan',
  'Barbara',
  'Édouard',
  'Zoë',
  'Chidi',
  'Mei',
  'Søren',
  'Priya',
  "O'Brien",
  'Jean-Luc',
] as const;

export const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Turing',
  'Liskov',
  'Okafor',
  'Müller',
];

/** A display name and address for recipient `i`; some recipients have no first name variable. */
export function person(next: () => number, i: number): { name: string; first: string; address: string } {
  const first = pick(next, FIRST_NAMES);
  const last = pick(next, LAST_NAMES);
  return { name: `${first} ${last}`, first, address: `r${i}@example.test` };
}
