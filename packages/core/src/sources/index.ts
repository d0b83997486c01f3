import type { SourceKind } from '../store/records.js';
import { audienceExpander } from './audience-source.js';
import { csvExpander } from './csv-source.js';
import type { SourceExpander } from './source-expander.js';

export type { SourceEnv, SourceExpander, SourcePage } from './source-expander.js';

/** The expander of each source kind. */
export const SOURCE_EXPANDERS: Partial<Record<SourceKind, SourceExpander>> = {
  audience: audienceExpander,
  csv: csvExpander,
};
