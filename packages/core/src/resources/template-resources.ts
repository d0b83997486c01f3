import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { TemplateCheckResult } from '../render/template-check.js';
import { validationError } from '../request/issues.js';
import type { RenderedContent, TemplateFormat, TemplateRecord, Variables } from '../store/records.js';
import { clampPageLimit, pageOf } from './resource-paging.js';
import {
  parseResourceBody,
  templateCheckSchema,
  templateCreateSchema,
  templatePreviewSchema,
  templateUpdateSchema,
} from './resource-schemas.js';
import type { MailroomTemplates, TemplateProblem, TemplateSample, TemplateView } from './resource-types.js';
import { writeTemplateVersion } from './template-versions.js';

/** What the templates borrow from the engine. */
export interface TemplateResourceDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  /** The dashboard's preview, which renders a stored template for a sample. */
  previewTemplate(auth: string | AuthContext, ref: string, sample?: TemplateSample): Promise<RenderedContent>;
  /**
   * Checks a source and subject off the main thread, within the project's render budget (the engine's
   * preview renderer, `checkTemplate` there).
   */
  checkTemplate(
    projectId: string,
    template: { format: TemplateFormat; source: string; subject: string | null; name: string },
  ): Promise<TemplateCheckResult>;
}

/** The management API of a project's templates (see {@link MailroomTemplates}). */
export function createTemplateResources(ctx: BaseContext, deps: TemplateResourceDeps): MailroomTemplates {
  const { store } = ctx;

  async function find(projectId: string, ref: string): Promise<TemplateRecord> {
    const template = await store.getTemplate(projectId, ref);
    if (!template) throw new MailroomError('NOT_FOUND', `Template ${ref} not found`);
    return template;
  }

  /** Compiles the version to write, or refuses it naming the field and line; nothing is written before. */
  async function compiled(
    projectId: string,
    ref: string,
    format: TemplateFormat,
    source: string,
    subject: string | null,
  ) {
    const check = await deps.checkTemplate(projectId, { format, source, subject, name: `template ${ref}` });
    if (check.compiled === null) throw invalidTemplate(check.problems);
    return { ref, format, source, subject, compiled: check.compiled };
  }

  return {
    async list(auth, page = {}) {
      const { project } = await deps.resolveAuth(auth);
      const limit = clampPageLimit(page.limit);
      const rows = await store.listTemplatePage(project.id, { after: page.after ?? null, limit: limit + 1 });
      return pageOf(rows.map(templateView), limit, (t) => t.ref);
    },

    async get(auth, ref) {
      const { project } = await deps.resolveAuth(auth);
      return templateView(await find(project.id, ref));
    },

    async create(auth, input) {
      const { project } = await deps.resolveAuth(auth);
      const body = parseResourceBody(templateCreateSchema, input);
      const content = await compiled(project.id, body.ref, body.format, body.source, body.subject ?? null);
      return templateView(await writeTemplateVersion(ctx, project.id, content, 'create'));
    },

    async update(auth, ref, input) {
      const { project } = await deps.resolveAuth(auth);
      const body = parseResourceBody(templateUpdateSchema, input);
      const current = await find(project.id, ref);
      const subject = body.subject === undefined ? current.subject : body.subject;
      const content = await compiled(project.id, ref, body.format ?? current.format, body.source, subject);
      return templateView(await writeTemplateVersion(ctx, project.id, content, 'update'));
    },

    async remove(auth, ref) {
      const { project } = await deps.resolveAuth(auth);
      if (!(await store.removeTemplate(project.id, ref))) {
        throw new MailroomError('NOT_FOUND', `Template ${ref} not found`);
      }
    },

    async validate(auth, ref, input = {}) {
      const { project } = await deps.resolveAuth(auth);
      const body = parseResourceBody(templateCheckSchema, input);
      const current = await store.getTemplate(project.id, ref);
      const format = body.format ?? current?.format;
      const source = body.source ?? current?.source;
      if (format === undefined || source === undefined) {
        throw validationError(
          [
            ...(format === undefined ? [{ code: 'custom', path: ['format'], message: 'Required' }] : []),
            ...(source === undefined ? [{ code: 'custom', path: ['source'], message: 'Required' }] : []),
          ].map((issue) => ({
            ...issue,
            message: `${issue.message}: template ${ref} does not exist to take it from`,
          })),
        );
      }
      const subject = body.subject === undefined ? (current?.subject ?? null) : body.subject;
      const { problems } = await deps.checkTemplate(project.id, {
        format,
        source,
        subject,
        name: `template ${ref}`,
      });
      return { valid: problems.length === 0, problems };
    },

    async preview(auth, ref, sample = {}) {
      const body = parseResourceBody(templatePreviewSchema, sample);
      return deps.previewTemplate(auth, ref, {
        // Checked to be JSON values by the schema (copyVariables).
        ...(body.variables ? { variables: body.variables as Variables } : {}),
        ...(body.recipient ? { recipient: body.recipient } : {}),
      });
    },
  };
}

/** A template's problems as the 400 of a write: each an issue at its field, the line in its message. */
function invalidTemplate(problems: TemplateProblem[]): MailroomError {
  return validationError(
    problems.map((p) => ({ code: 'template_invalid', path: [p.field], message: p.message })),
  );
}

/** A template as the API shows it. */
export function templateView(t: TemplateRecord): TemplateView {
  return {
    ref: t.ref,
    format: t.format,
    subject: t.subject,
    source: t.source,
    version: t.version,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}
