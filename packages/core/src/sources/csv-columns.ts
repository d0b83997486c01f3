import { MailroomError } from '../base/errors.js';
import { checkAddress } from '../request/address.js';
import { FIELD_LIMITS } from '../request/field-limits.js';
import type { Variables } from '../store/records.js';

/** Which cell of a row feeds which recipient field or trait, decided once from the header row. */
export interface CsvColumnPlan {
  address: number;
  name: number | null;
  traits: Array<{ index: number; key: string }>;
  /** The columns mapped to `consent.state`, `consent.topics`, `consent.source`, `consent.time` (imports). */
  consent: Partial<Record<ConsentColumn, number>>;
}

/** The consent fields a column can be mapped to (`{ "Status": "consent.state" }`). */
export type ConsentColumn = 'state' | 'topics' | 'source' | 'time';
const CONSENT_COLUMNS: readonly ConsentColumn[] = ['state', 'topics', 'source', 'time'];

/** One data row read as a recipient, or why it cannot be one. */
export type CsvRecipient =
  | {
      ok: true;
      address: string;
      name: string | null;
      traits: Variables;
      /** The consent cells, when columns are mapped to `consent.*` (empty cells as null). */
      consent?: Record<ConsentColumn, string | null>;
    }
  | { ok: false; reason: string };

/** Headings that hold the address when no column is mapped to `address`, compared case-insensitively. */
const ADDRESS_HEADINGS = ['address', 'email', 'e-mail', 'email address', 'email_address', 'mail'];

// Keys that would reach an object's prototype machinery instead of being plain data.
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Reads the header row with the source's `columnMappings` (CSV heading to trait name):
 * - a heading is matched to a mapping key exactly after trimming, else case-insensitively;
 * - a column mapped to `address` or `name` (any case) feeds that recipient field; when none is mapped to
 *   `address`, the first heading named `address`, `email`, `e-mail`, `email address`, `email_address` or
 *   `mail` (any case) is the address;
 * - every other column is a trait under its mapped name, or under its own heading when unmapped; empty
 *   headings and prototype keys (`__proto__`, ...) are skipped; the first of two equal trait names wins.
 *
 * @throws MailroomError `UNPROCESSABLE` when no column holds the address, or when the header has more
 * than `FIELD_LIMITS.csvColumns` columns (each would be a trait of every profile).
 */
export function planColumns(header: string[], mappings: Record<string, string>): CsvColumnPlan {
  const maxColumns = FIELD_LIMITS.csvColumns.max;
  if (header.length > maxColumns) {
    throw new MailroomError(
      'UNPROCESSABLE',
      `The CSV has ${header.length.toLocaleString('en-US')} columns; at most ${maxColumns.toLocaleString('en-US')} are read (the csvColumns cap): drop the columns you do not need`,
    );
  }
  const lowerKeys = new Map<string, string>();
  for (const key of Object.keys(mappings)) lowerKeys.set(key.trim().toLowerCase(), key);
  const targetOf = (heading: string): string => {
    const exact = Object.hasOwn(mappings, heading) ? mappings[heading] : undefined;
    const loose = lowerKeys.get(heading.toLowerCase());
    return (exact ?? (loose !== undefined ? mappings[loose] : undefined) ?? heading).trim();
  };
  let address: number | null = null;
  let name: number | null = null;
  const traits: CsvColumnPlan['traits'] = [];
  const consent: CsvColumnPlan['consent'] = {};
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const heading = raw.trim();
    const target = targetOf(heading);
    const reserved = target.toLowerCase();
    const consentField = reserved.startsWith('consent.') ? reserved.slice(8) : '';
    if (reserved === 'address') address ??= index;
    else if (reserved === 'name') name ??= index;
    else if ((CONSENT_COLUMNS as readonly string[]).includes(consentField))
      consent[consentField as ConsentColumn] ??= index;
    else if (target !== '' && !UNSAFE_KEYS.has(target) && !seen.has(target)) {
      seen.add(target);
      traits.push({ index, key: target });
    }
  });
  if (address === null) {
    const fallback = header.findIndex((h) => ADDRESS_HEADINGS.includes(h.trim().toLowerCase()));
    if (fallback === -1) {
      throw new MailroomError(
        'UNPROCESSABLE',
        `The CSV has no address column (headings: ${header.slice(0, 20).join(', ')}); map one with columnMappings, for example { "Email": "address" }`,
      );
    }
    address = fallback;
    // The fallback column was read as a trait above; it is the address now.
    const at = traits.findIndex((t) => t.index === fallback);
    if (at !== -1) traits.splice(at, 1);
  }
  return { address, name, traits, consent };
}

/**
 * One data row as a recipient. Cells are data: a cell starting with `=`, `+`, `-` or `@` is kept as the
 * plain string it is, never evaluated. Empty cells give no trait (they do not blank a stored one).
 */
export function readRecipient(cells: string[], plan: CsvColumnPlan): CsvRecipient {
  const raw = cells[plan.address] ?? '';
  const checked = checkAddress(raw);
  if (!checked.ok) {
    const shown = raw.length > 80 ? `${raw.slice(0, 80)}…` : raw;
    return { ok: false, reason: `invalid address ${JSON.stringify(shown)}: ${checked.reason}` };
  }
  const nameCell = plan.name === null ? '' : (cells[plan.name] ?? '').trim();
  const traits: Variables = {};
  // The traits' size as JSON, roughly (quotes, colon and comma per member; escapes not counted).
  let bytes = 2;
  for (const { index, key } of plan.traits) {
    const value = cells[index];
    if (value === undefined || value === '') continue;
    traits[key] = value;
    bytes += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(value, 'utf8') + 6;
  }
  const maxBytes = FIELD_LIMITS.profileTraitBytes.max;
  if (bytes > maxBytes) {
    return {
      ok: false,
      reason: `traits of ${bytes.toLocaleString('en-US')} bytes: at most ${maxBytes.toLocaleString('en-US')} per profile (the profileTraitBytes cap)`,
    };
  }
  const recipient = {
    ok: true as const,
    address: checked.address,
    name: nameCell === '' ? null : nameCell,
    traits,
  };
  if (Object.keys(plan.consent).length === 0) return recipient;
  const cell = (field: ConsentColumn) => {
    const index = plan.consent[field];
    const value = index === undefined ? '' : (cells[index] ?? '').trim();
    return value === '' ? null : value;
  };
  return {
    ...recipient,
    consent: { state: cell('state'), topics: cell('topics'), source: cell('source'), time: cell('time') },
  };
}
