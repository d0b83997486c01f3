import type { ExistingAction } from '../store/records.js';
import type { FieldProblem } from './attachments.js';
import { isHttpUrl } from './attachments.js';
import type { AudienceSourceSpec, CsvSourceSpec, SourceSpec } from './request-types.js';
import { isBlankText, trimBlanks } from './text-checks.js';

/**
 * Broadcast sources in every shape the clients send: the Dart SDK's `{ type: "CSV", config: {...} }`
 * and `{ config: { ref, ... } }` (no type means an audience group), the spec's flat shape with the
 * fields at the top level, and the TypeScript SDK's top-level `audience: string[]`.
 */

/** The fields a source may carry, in `config` or at the top level, after zod has checked their types. */
export interface SourceFieldsInput {
  ref?: string | null | undefined;
  label?: string | null | undefined;
  url?: string | null | undefined;
  columnMappings?: Record<string, string> | null | undefined;
  actionOnExistingTrait?: ExistingAction | null | undefined;
  actionOnExistingProfile?: ExistingAction | null | undefined;
  includeUnsubscribed?: boolean | null | undefined;
  topic?: string | null | undefined;
}

/** A source as it arrives: an optional `type`, and its fields in `config` or flat. */
export interface SourceInput extends SourceFieldsInput {
  type?: string | null | undefined;
  config?: SourceFieldsInput | null | undefined;
}

/** The outcome of resolving a source, without throwing. */
export type SourceCheck = { ok: true; source: SourceSpec } | { ok: false; problems: FieldProblem[] };

/** An audience-group source for one ref, with the documented defaults. */
export function audienceSource(ref: string): AudienceSourceSpec {
  return {
    kind: 'audience',
    ref: trimBlanks(ref),
    actionOnExistingTrait: 'preserve',
    actionOnExistingProfile: 'preserve',
    includeUnsubscribed: false,
    topic: null,
  };
}

/**
 * Decides the kind of a source and checks its required fields. `type` is matched case-insensitively,
 * ignoring `_`, `-` and spaces: `csv` is a CSV file; `audience`, `audiencegroup` or `group` an audience
 * group. Without a type, a source with a `label` and no `ref` is a CSV file, any other an audience group.
 */
export function resolveSource(input: SourceInput): SourceCheck {
  const inConfig = input.config !== null && input.config !== undefined;
  const fields = mergeFields(input, input.config);
  const prefix = inConfig ? ['config'] : [];
  const kind = kindOf(input.type, fields);
  if (kind === null) {
    return {
      ok: false,
      problems: [{ path: ['type'], message: 'Unsupported source type: expected CSV or AUDIENCE' }],
    };
  }
  if (kind === 'csv') {
    const problems: FieldProblem[] = [];
    if (typeof fields.label !== 'string' || isBlankText(fields.label)) {
      problems.push({ path: [...prefix, 'label'], message: 'Required for a CSV source: a non-empty label' });
    }
    const url = typeof fields.url === 'string' ? trimBlanks(fields.url) : null;
    if (url !== null && !isHttpUrl(url)) {
      problems.push({ path: [...prefix, 'url'], message: 'Must be an absolute http(s) URL' });
    }
    if (problems.length > 0) return { ok: false, problems };
    const source: CsvSourceSpec = {
      kind: 'csv',
      label: trimBlanks(fields.label ?? ''),
      url,
      columnMappings: copyMappings(fields.columnMappings),
      topic: topicOf(fields.topic),
    };
    return { ok: true, source };
  }
  if (typeof fields.ref !== 'string' || isBlankText(fields.ref)) {
    return {
      ok: false,
      problems: [
        { path: [...prefix, 'ref'], message: 'Required for an audience group source: a non-empty ref' },
      ],
    };
  }
  const source: AudienceSourceSpec = {
    ...audienceSource(fields.ref),
    actionOnExistingTrait: fields.actionOnExistingTrait ?? 'preserve',
    actionOnExistingProfile: fields.actionOnExistingProfile ?? 'preserve',
    includeUnsubscribed: fields.includeUnsubscribed ?? false,
    topic: topicOf(fields.topic),
  };
  return { ok: true, source };
}

// Fields in `config` win; flat fields fill what `config` leaves out.
function mergeFields(
  flat: SourceFieldsInput,
  config: SourceFieldsInput | null | undefined,
): SourceFieldsInput {
  if (!config) return flat;
  return {
    ref: config.ref ?? flat.ref,
    label: config.label ?? flat.label,
    url: config.url ?? flat.url,
    columnMappings: config.columnMappings ?? flat.columnMappings,
    actionOnExistingTrait: config.actionOnExistingTrait ?? flat.actionOnExistingTrait,
    actionOnExistingProfile: config.actionOnExistingProfile ?? flat.actionOnExistingProfile,
    includeUnsubscribed: config.includeUnsubscribed ?? flat.includeUnsubscribed,
    topic: config.topic ?? flat.topic,
  };
}

function kindOf(type: string | null | undefined, fields: SourceFieldsInput): 'csv' | 'audience' | null {
  if (typeof type === 'string' && !isBlankText(type)) {
    const key = type.toLowerCase().replace(/[\s_-]/g, '');
    if (key === 'csv') return 'csv';
    if (key === 'audience' || key === 'audiencegroup' || key === 'group') return 'audience';
    return null;
  }
  return typeof fields.label === 'string' && typeof fields.ref !== 'string' ? 'csv' : 'audience';
}

function copyMappings(mappings: Record<string, string> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!mappings) return out;
  for (const key of Object.keys(mappings)) {
    const value = mappings[key];
    if (key !== '__proto__' && typeof value === 'string') out[key] = value;
  }
  return out;
}

/** A source's topic filter: a non-blank key, trimmed, or null. */
function topicOf(topic: string | null | undefined): string | null {
  return typeof topic === 'string' && !isBlankText(topic) ? trimBlanks(topic) : null;
}
