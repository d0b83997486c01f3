import type { FormInput, FormPatch } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type FormRouteName = Extract<RouteName, 'forms' | 'form'>;

/**
 * Signup forms (issue 38): `GET/POST /forms`, `GET/PATCH/DELETE /forms/:ref`. The engine checks every body;
 * the public side (`POST /subscribe/:ref`, the confirmation links) is in signup-routes.ts.
 */
export const FORM_ROUTES = {
  async forms({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Forms', { forms: await mailroom.forms.list(auth) });
    }
    const form = await mailroom.forms.create(auth, readJson() as FormInput);
    return successResponse(requestId, 'Form created', { form });
  },

  async form({ mailroom, auth, req, requestId, params, readJson }) {
    const ref = params.ref ?? '';
    if (req.method === 'DELETE') {
      await mailroom.forms.remove(auth, ref);
      return successResponse(requestId, 'Form deleted (its signups and consent history stay)', { form: ref });
    }
    if (req.method === 'PATCH') {
      const form = await mailroom.forms.update(auth, ref, readJson() as FormPatch);
      return successResponse(requestId, 'Form updated', { form });
    }
    return successResponse(requestId, 'Form', { form: await mailroom.forms.get(auth, ref) });
  },
} satisfies Record<FormRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;
