import type { AuthContext, Mailroom, Variables } from '@mailroom/core';
import { isMailroomError, MailroomError } from '@mailroom/core';
import type { NeutralRequest, NeutralResponse } from '../../neutral/types.js';
import {
  type AreaDeps,
  type AreaRoutes,
  allowed,
  type Call,
  ctxOf,
  GET,
  page,
  textDocument,
} from '../dashboard-call.js';
import { previewDocument, queryOf } from '../dashboard-http.js';
import { type TemplateSampleForm, templatePage, templatesPage } from '../pages/templates-page.js';

const DEFAULT_SAMPLE: TemplateSampleForm = {
  variables: '{}',
  name: 'Ada Lovelace',
  address: 'ada@example.com',
};

/** The templates: their list, one template rendered with a sample, and that rendering alone for its frame. */
export function createTemplateRoutes({ mailroom }: AreaDeps): AreaRoutes {
  async function template(call: Call, auth: AuthContext, ref: string): Promise<NeutralResponse> {
    const view = await mailroom.getTemplate(auth, ref);
    const sample = sampleOf(call.req);
    let rendered: Awaited<ReturnType<Mailroom['previewTemplate']>> | { error: string };
    try {
      rendered = await mailroom.previewTemplate(auth, ref, parseSample(sample));
    } catch (error) {
      if (!isMailroomError(error) || error.status >= 500 || error.code === 'NOT_FOUND') throw error;
      rendered = { error: error.message };
    }
    return page(call, 200, templatePage(ctxOf(call), view, sample, rendered));
  }

  async function templatePreview(call: Call, auth: AuthContext, ref: string): Promise<NeutralResponse> {
    await mailroom.getTemplate(auth, ref);
    try {
      const rendered = await mailroom.previewTemplate(auth, ref, parseSample(sampleOf(call.req)));
      return previewDocument(call.requestId, rendered.html ?? textDocument(rendered.text));
    } catch (error) {
      if (!isMailroomError(error) || error.status >= 500 || error.code === 'NOT_FOUND') throw error;
      return { ...previewDocument(call.requestId, textDocument(error.message)), status: error.status };
    }
  }

  return new Map([
    [
      'templates',
      (call, auth) => {
        const [, ref, action] = call.segments;
        if (ref === undefined) {
          return allowed(call, GET, async () =>
            page(call, 200, templatesPage(ctxOf(call), await mailroom.listTemplates(auth))),
          );
        }
        if (call.segments.length === 2) return allowed(call, GET, () => template(call, auth, ref));
        if (action === 'preview' && call.segments.length === 3)
          return allowed(call, GET, () => templatePreview(call, auth, ref));
        return undefined;
      },
    ],
  ]);
}

/** The sample of a template preview, from the query string (the form is a GET: previewing changes nothing). */
function sampleOf(req: NeutralRequest): TemplateSampleForm {
  const q = queryOf(req);
  return {
    variables: q.get('variables') ?? DEFAULT_SAMPLE.variables,
    name: q.get('name') ?? DEFAULT_SAMPLE.name,
    address: q.get('address') ?? DEFAULT_SAMPLE.address,
  };
}

function parseSample(sample: TemplateSampleForm): {
  variables: Variables;
  recipient: { name: string; address: string };
} {
  let variables: unknown;
  try {
    variables = JSON.parse(sample.variables.trim() === '' ? '{}' : sample.variables);
  } catch {
    throw new MailroomError('VALIDATION_FAILED', 'The variables are not valid JSON');
  }
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new MailroomError('VALIDATION_FAILED', 'The variables must be a JSON object');
  }
  return { variables: variables as Variables, recipient: { name: sample.name, address: sample.address } };
}
