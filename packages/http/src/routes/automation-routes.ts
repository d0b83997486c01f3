import { MailroomError, type RunStatus } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type AutomationRouteName = Extract<
  RouteName,
  | 'events-track'
  | 'automations'
  | 'automation'
  | 'automation-pause'
  | 'automation-resume'
  | 'automation-runs'
  | 'automation-stats'
>;

const RUN_STATUSES: readonly RunStatus[] = ['active', 'completed', 'exited'];

/**
 * Automations (issue 39): `POST /events/track` (an event of a contact: starts, wakes and ends runs; an `id`
 * makes a repeat a no-op), `GET/POST /automations` (workflows: list, create from a definition),
 * `GET/PUT/DELETE /automations/:id` (one workflow with its run counts per step; a new version; delete),
 * `POST /automations/:id/pause|resume`, `GET /automations/:id/runs` (`?status=&cursor=&limit=`) and
 * `GET /automations/:id/stats` (runs entered, waiting, passed and exited at each step). The
 * engine checks every body; a bad definition is 400 with issues naming its path.
 */
export const AUTOMATION_ROUTES = {
  async 'events-track'({ mailroom, auth, requestId, readJson }) {
    const result = await mailroom.track(auth, readJson());
    return successResponse(requestId, result.recorded ? 'Event tracked' : 'Event already tracked', result);
  },

  async automations({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Workflows', { workflows: await mailroom.automations.list(auth) });
    }
    const workflow = await mailroom.automations.create(auth, readJson());
    return successResponse(requestId, 'Workflow created', { workflow });
  },

  async automation({ mailroom, auth, req, requestId, params, readJson }) {
    const id = params.id ?? '';
    if (req.method === 'DELETE') {
      await mailroom.automations.delete(auth, id);
      return successResponse(requestId, 'Workflow deleted; its runs end', { workflow: id });
    }
    if (req.method === 'PUT') {
      const workflow = await mailroom.automations.update(auth, id, readJson());
      return successResponse(requestId, 'Workflow updated: a new version', { workflow });
    }
    return successResponse(requestId, 'Workflow', { workflow: await mailroom.automations.get(auth, id) });
  },

  async 'automation-pause'({ mailroom, auth, requestId, params }) {
    const workflow = await mailroom.automations.pause(auth, params.id ?? '');
    return successResponse(requestId, 'Workflow paused', { workflow });
  },

  async 'automation-resume'({ mailroom, auth, requestId, params }) {
    const workflow = await mailroom.automations.resume(auth, params.id ?? '');
    return successResponse(requestId, 'Workflow resumed', { workflow });
  },

  async 'automation-runs'({ mailroom, auth, req, requestId, params }) {
    const query = new URLSearchParams(req.query ?? '');
    const limit = query.get('limit');
    const n = limit === null ? undefined : Number(limit);
    if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 1000)) {
      throw invalid('limit', '`limit` must be an integer from 1 to 1000');
    }
    const status = query.get('status');
    if (status !== null && !RUN_STATUSES.includes(status as RunStatus)) {
      throw invalid('status', '`status` must be active, completed or exited');
    }
    const runs = await mailroom.automations.runs(auth, params.id ?? '', {
      after: query.get('cursor'),
      ...(n !== undefined ? { limit: n } : {}),
      ...(status !== null ? { status: status as RunStatus } : {}),
    });
    const size = n ?? 100;
    const next = runs.length === size ? (runs[runs.length - 1]?.id ?? null) : null;
    return successResponse(requestId, 'Runs', { runs, nextCursor: next });
  },

  async 'automation-stats'({ mailroom, auth, requestId, params }) {
    const stats = await mailroom.automations.stats(auth, params.id ?? '');
    return successResponse(requestId, 'Runs per step', { stats });
  },
} satisfies Record<AutomationRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

function invalid(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'invalid_type', path: [field], message }],
  });
}
