import type { Variables } from '@mailroom/core';

/** One recipient of a corpus template, as a broadcast request carries it. */
export interface CorpusRecipient {
  address: string;
  name: string;
  variables: Variables;
}

/**
 * A realistic template of the benchmark corpus: its source as a user would store it (`createTemplate`),
 * the subject, the mailing's global variables, and a generator of per-recipient variables.
 */
export interface CorpusTemplate {
  /** Template ref, kebab-case. */
  ref: string;
  /** What the template stands for, one line (for reports). */
  description: string;
  format: 'mjml' | 'html' | 'text';
  /** Liquid subject of the broadcast. */
  subject: string;
  source: string;
  /** The mailing's global variables (`template.variables` of the request). */
  globals: Variables;
  /** Recipient `i` of 0..99,999: deterministic (same `i`, same recipient). */
  recipient(i: number): CorpusRecipient;
}
