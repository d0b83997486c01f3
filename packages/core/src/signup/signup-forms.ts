import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ResolveAuth } from '../context/capability.js';
import { normalizeAddress, toValidationIssues } from '../request/index.js';
import type { FormRecord } from '../store/signup-records.js';
import type { FormView, MailroomForms } from './signup-types.js';

const NAME = z.string().trim().min(1).max(256);
const REF = z.string().trim().min(1).max(128);
/** An origin as browsers send it: scheme, host and port, nothing after. */
const ORIGIN = z
  .string()
  .max(256)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
    } catch {
      return false;
    }
  }, 'An origin is scheme://host[:port] with nothing after (https://www.example.com)');
const FIELDS = {
  name: NAME,
  group: REF.nullable().optional(),
  topic: REF.nullable().optional(),
  allowedOrigins: z.array(ORIGIN).max(50).optional(),
  consentText: z.string().trim().min(1).max(5000),
  sender: z.string().max(254),
  confirmTemplate: REF.nullable().optional(),
};
const CREATE_SCHEMA = z.strictObject(FIELDS);
const PATCH_SCHEMA = z.strictObject(FIELDS).partial();

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new MailroomError('VALIDATION_FAILED', 'Invalid form request', {
      issues: toValidationIssues(result.error.issues),
    });
  }
  return result.data;
}

/** A form as the API shows it. */
export function formView(form: FormRecord): FormView {
  const current = form.consentTexts.at(-1);
  return {
    ref: form.ref,
    name: form.name,
    group: form.groupRef,
    topic: form.topicKey,
    allowedOrigins: [...form.allowedOrigins],
    consentText: current?.text ?? '',
    consentVersion: current?.version ?? 0,
    consentTexts: form.consentTexts.map((t) => ({ ...t })),
    sender: form.sender,
    confirmTemplate: form.confirmTemplateRef,
    createdAt: form.createdAt,
    updatedAt: form.updatedAt,
  };
}

/**
 * `mailroom.forms`: a project's signup forms. A form names what a signup joins (a group, a topic or both),
 * the origins a browser may post from, the sender and template of the confirmation message, and its
 * consent text: a changed text is a new version, and every version stays (each record keeps its wording).
 */
export function createFormsApi(ctx: BaseContext, resolveAuth: ResolveAuth): MailroomForms {
  const { store, clock } = ctx;
  const projectOf = async (auth: string | AuthContext) => (await resolveAuth(auth)).project.id;
  const notFound = (ref: string) => new MailroomError('NOT_FOUND', `Form ${ref} not found`);

  async function find(projectId: string, ref: string): Promise<FormRecord> {
    const form = await store.findForm(ref);
    if (!form || form.projectId !== projectId) throw notFound(ref);
    return form;
  }

  /** Refuses a form whose targets, sender or template the project lacks (nothing is written then). */
  async function checkReferences(projectId: string, form: FormRecord): Promise<void> {
    if (form.groupRef === null && form.topicKey === null) {
      throw new MailroomError('VALIDATION_FAILED', 'A form needs a group, a topic or both', {
        issues: [{ code: 'custom', path: ['group'], message: 'Required: a group or a topic' }],
      });
    }
    if (form.groupRef !== null && !(await store.getGroup(projectId, form.groupRef))) {
      throw new MailroomError('NOT_FOUND', `Audience group ${form.groupRef} not found`);
    }
    if (form.topicKey !== null && !(await store.getTopic(projectId, form.topicKey))) {
      throw new MailroomError('NOT_FOUND', `Topic ${form.topicKey} not found`);
    }
    if (!(await store.findSender(projectId, form.sender))) {
      throw new MailroomError('NOT_FOUND', `Sender ${form.sender} not found`);
    }
    if (form.confirmTemplateRef !== null && !(await store.getTemplate(projectId, form.confirmTemplateRef))) {
      throw new MailroomError('NOT_FOUND', `Template ${form.confirmTemplateRef} not found`);
    }
  }

  return {
    async list(auth) {
      return (await store.listForms(await projectOf(auth))).map(formView);
    },

    async create(auth, input) {
      const projectId = await projectOf(auth);
      const body = parse(CREATE_SCHEMA, input);
      const now = clock.now();
      const form: FormRecord = {
        // Random, not sortable by time: the ref is public and says nothing of when or how many.
        ref: `frm_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`,
        projectId,
        name: body.name,
        groupRef: body.group ?? null,
        topicKey: body.topic ?? null,
        allowedOrigins: body.allowedOrigins ?? [],
        consentTexts: [{ version: 1, text: body.consentText, createdAt: now }],
        sender: normalizeAddress(body.sender),
        confirmTemplateRef: body.confirmTemplate ?? null,
        createdAt: now,
        updatedAt: now,
      };
      await checkReferences(projectId, form);
      await store.createForm(form);
      return formView(form);
    },

    async get(auth, ref) {
      return formView(await find(await projectOf(auth), ref));
    },

    async update(auth, ref, patch) {
      const projectId = await projectOf(auth);
      const body = parse(PATCH_SCHEMA, patch);
      const form = await find(projectId, ref);
      const now = clock.now();
      const texts = [...form.consentTexts];
      const last = texts.at(-1);
      if (body.consentText !== undefined && body.consentText !== last?.text) {
        texts.push({ version: (last?.version ?? 0) + 1, text: body.consentText, createdAt: now });
      }
      const next: FormRecord = {
        ...form,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.group !== undefined ? { groupRef: body.group } : {}),
        ...(body.topic !== undefined ? { topicKey: body.topic } : {}),
        ...(body.allowedOrigins !== undefined ? { allowedOrigins: body.allowedOrigins } : {}),
        ...(body.sender !== undefined ? { sender: normalizeAddress(body.sender) } : {}),
        ...(body.confirmTemplate !== undefined ? { confirmTemplateRef: body.confirmTemplate } : {}),
        consentTexts: texts,
        updatedAt: now,
      };
      await checkReferences(projectId, next);
      if (!(await store.replaceForm(next))) throw notFound(ref);
      return formView(next);
    },

    async remove(auth, ref) {
      if (!(await store.deleteForm(await projectOf(auth), ref))) throw notFound(ref);
    },
  };
}
