import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type { TemplateFormat, TemplateRecord } from '../store/records.js';

/** A template version's content, already compiled and checked. */
export interface TemplateContent {
  ref: string;
  format: TemplateFormat;
  subject: string | null;
  source: string;
  compiled: string;
}

/**
 * What writing a version requires of the stored template: `create` only a new ref (`CONFLICT`
 * otherwise), `update` only an existing one (`NOT_FOUND` otherwise), `upsert` either.
 */
export type TemplateWriteMode = 'create' | 'update' | 'upsert';

/** Rounds of read and compare-and-set before concurrent writers are reported as a `CONFLICT`. */
const WRITE_ATTEMPTS = 16;

/**
 * Writes a template's next version (or its first) with the store's compare-and-set, in one statement:
 * a failure leaves the previous version whole. When another writer got there first, the version is read
 * again and the write made on top of it, so concurrent writers each make their own version and none is
 * lost silently.
 *
 * @throws MailroomError `CONFLICT` (mode `create`, the ref exists; or writers kept racing), `NOT_FOUND`
 *   (mode `update`, no such ref).
 */
export async function writeTemplateVersion(
  ctx: BaseContext,
  projectId: string,
  content: TemplateContent,
  mode: TemplateWriteMode,
): Promise<TemplateRecord> {
  const { store, clock } = ctx;
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const existing = await store.getTemplate(projectId, content.ref);
    if (existing && mode === 'create') {
      throw new MailroomError('CONFLICT', `Template ${content.ref} already exists: update it with PUT`);
    }
    if (!existing && mode === 'update') {
      throw new MailroomError('NOT_FOUND', `Template ${content.ref} not found`);
    }
    const now = clock.now();
    const template: TemplateRecord = {
      id: existing?.id ?? newId('tpl', now.getTime()),
      projectId,
      ...content,
      version: (existing?.version ?? 0) + 1,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    if (await store.writeTemplateVersion(template, existing?.version ?? null)) return template;
  }
  throw new MailroomError('CONFLICT', `Template ${content.ref} was changed concurrently; try again`);
}
