import type {
  PageRequest,
  TemplateCheckInput,
  TemplateCreateInput,
  TemplateSample,
  TemplateUpdateInput,
} from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type ResourceRouteName = Extract<
  RouteName,
  | 'templates'
  | 'template'
  | 'template-validate'
  | 'template-preview'
  | 'senders'
  | 'sender'
  | 'suppressions'
  | 'suppression'
>;

/**
 * `GET/POST /templates`, `GET/PUT/DELETE /templates/:ref`, `POST /templates/:ref/validate` and
 * `.../preview`; `GET/POST /senders`, `DELETE /senders/:email`; `GET/POST /suppressions`,
 * `DELETE /suppressions/:email`. The engine validates the bodies (unknown fields refused by name); this
 * module only maps paths, queries and answers (the casts below name what the engine checks the body for).
 */
export const RESOURCE_ROUTES = {
  async templates({ mailroom, auth, req, requestId, readJson }) {
    if (req.method === 'POST') {
      const template = await mailroom.templates.create(auth, readJson() as TemplateCreateInput);
      return successResponse(requestId, 'Template created', { template });
    }
    const page = await mailroom.templates.list(auth, pageQuery(req));
    return successResponse(requestId, 'Templates', { templates: page.items, nextCursor: page.next });
  },

  async template({ mailroom, auth, req, requestId, params, readJson }) {
    const ref = params.ref ?? '';
    if (req.method === 'PUT') {
      const template = await mailroom.templates.update(auth, ref, readJson() as TemplateUpdateInput);
      return successResponse(requestId, `Template updated to version ${template.version}`, { template });
    }
    if (req.method === 'DELETE') {
      await mailroom.templates.remove(auth, ref);
      return successResponse(requestId, 'Template removed', { ref });
    }
    return successResponse(requestId, 'Template', { template: await mailroom.templates.get(auth, ref) });
  },

  async 'template-validate'({ mailroom, auth, req, requestId, params, readJson }) {
    const result = await mailroom.templates.validate(
      auth,
      params.ref ?? '',
      optionalBody(req, readJson) as TemplateCheckInput,
    );
    return successResponse(requestId, result.valid ? 'Template is valid' : 'Template has problems', result);
  },

  async 'template-preview'({ mailroom, auth, req, requestId, params, readJson }) {
    const rendered = await mailroom.templates.preview(
      auth,
      params.ref ?? '',
      optionalBody(req, readJson) as TemplateSample,
    );
    return successResponse(requestId, 'Template preview', {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
    });
  },

  async senders({ mailroom, auth, req, requestId, readJson }) {
    if (req.method === 'POST') {
      const sender = await mailroom.senders.add(auth, readJson() as { address: string });
      return successResponse(requestId, 'Sender added', { sender });
    }
    const page = await mailroom.senders.list(auth, pageQuery(req));
    return successResponse(requestId, 'Senders', { senders: page.items, nextCursor: page.next });
  },

  async sender({ mailroom, auth, requestId, params }) {
    const address = params.email ?? '';
    await mailroom.senders.remove(auth, address);
    return successResponse(requestId, 'Sender removed', { address });
  },

  async suppressions({ mailroom, auth, req, requestId, readJson }) {
    if (req.method === 'POST') {
      const suppression = await mailroom.suppressions.add(auth, readJson() as { address: string });
      return successResponse(requestId, 'Address suppressed', { suppression });
    }
    const q = new URLSearchParams(req.query ?? '').get('q');
    const page = await mailroom.suppressions.list(auth, { ...pageQuery(req), ...(q ? { q } : {}) });
    return successResponse(requestId, 'Suppressions', { suppressions: page.items, nextCursor: page.next });
  },

  async suppression({ mailroom, auth, requestId, params }) {
    const address = params.email ?? '';
    await mailroom.suppressions.lift(auth, address);
    return successResponse(requestId, 'Suppression lifted', { address });
  },
} satisfies Record<ResourceRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

/** `?cursor=&limit=` of a listing; a limit that is not a positive integer is refused, naming it. */
function pageQuery(req: NeutralRequest): PageRequest {
  const query = new URLSearchParams(req.query ?? '');
  const cursor = query.get('cursor');
  const limit = query.get('limit');
  const page: PageRequest = {};
  if (cursor) page.after = cursor;
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1) {
      const message = 'Must be a positive integer (at most 200 are returned)';
      throw new MailroomError('VALIDATION_FAILED', `Invalid request: limit: ${message}`, {
        issues: [{ code: 'invalid_type', path: ['limit'], message }],
      });
    }
    page.limit = n;
  }
  return page;
}

/** The JSON body of a call whose body is optional: none is `{}`. */
function optionalBody(req: NeutralRequest, readJson: () => unknown): unknown {
  return (req.body?.byteLength ?? 0) === 0 ? {} : readJson();
}
