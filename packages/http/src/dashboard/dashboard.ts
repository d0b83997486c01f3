import type { Logger, Mailroom } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { AuthFailureLimit } from '../limits/auth-failure-limit.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import type { AreaDeps, AreaRoutes, Call, PageRoute } from './dashboard-call.js';
import { failureAnswer } from './dashboard-failure.js';
import { newNonce } from './dashboard-http.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import { createPauseActions } from './pause-actions.js';
import { createAudienceRoutes } from './routes/audience-routes.js';
import { createAutomationRoutes } from './routes/automation-routes.js';
import { createInboundRoutes } from './routes/inbound-routes.js';
import { createMailingRoutes } from './routes/mailing-routes.js';
import { createPauseRoutes } from './routes/pause-routes.js';
import { createSessionRoutes } from './routes/session-routes.js';
import { createSettingsRoutes } from './routes/settings-routes.js';
import { createTemplateRoutes } from './routes/template-routes.js';
import { createWebhookRoutes } from './routes/webhook-routes.js';

/** The dashboard of one HTTP handler. */
export interface Dashboard {
  /** Its path relative to the mount point (`/dashboard`). */
  readonly prefix: string;
  /** Whether `path` (relative to the mount point) is the dashboard's. */
  owns(path: string): boolean;
  /** Answers a request for one of its paths. Never rejects: refusals and faults become pages. */
  handle(req: NeutralRequest, requestId: string): Promise<NeutralResponse>;
}

/**
 * The project dashboard: server-rendered pages over the engine's read methods, each scoped to the project
 * whose secret signed in (docs/architecture.md, invariant 4). Each area's pages are answered in a file of
 * their own under `routes/`; this file signs the call in and hands it to the area its first segment names.
 */
export function createDashboard(
  mailroom: Mailroom,
  options: ResolvedDashboardOptions,
  logger: Logger,
  failures: AuthFailureLimit | null = null,
): Dashboard {
  const { prefix } = options;
  const deps: AreaDeps = { mailroom, logger, pauseActions: createPauseActions(mailroom, logger) };
  const session = createSessionRoutes(deps, options, failures);
  const areas = assemble([
    createMailingRoutes(deps),
    createTemplateRoutes(deps),
    createAudienceRoutes(deps),
    createAutomationRoutes(deps),
    createInboundRoutes(deps),
    createWebhookRoutes(deps),
    createSettingsRoutes(deps),
    createPauseRoutes(deps),
  ]);

  async function route(call: Call): Promise<NeutralResponse> {
    const open = session.open(call);
    if (open) return open;
    const signed = await session.signedIn(call);
    if ('answer' in signed) return signed.answer;
    const answer = areas.get(call.segments[0] ?? '')?.(call, signed.auth);
    if (answer) return answer;
    throw new MailroomError('NOT_FOUND', 'No such page');
  }

  return {
    prefix,
    owns: (path) => path === prefix || path.startsWith(`${prefix}/`),
    async handle(req, requestId) {
      const call: Call = {
        req,
        requestId,
        nonce: newNonce(),
        root: `${(req.base ?? '').replace(/\/+$/, '')}${prefix}`,
        method: req.method === 'HEAD' ? 'GET' : req.method,
        segments: [],
        machine: false,
      };
      let res: NeutralResponse;
      try {
        const segments = splitPath(req.path.slice(prefix.length));
        if (!segments) throw new MailroomError('NOT_FOUND', 'No such page');
        call.segments = segments;
        res = await route(call);
      } catch (error) {
        res = failureAnswer(call, error, logger);
      }
      return req.method === 'HEAD' ? { ...res, body: '' } : res;
    },
  };
}

/** The areas' page families in one map; a first segment claimed twice is a mistake caught at start. */
function assemble(areas: readonly AreaRoutes[]): ReadonlyMap<string, PageRoute> {
  const all = new Map<string, PageRoute>();
  for (const area of areas) {
    for (const [segment, pageRoute] of area) {
      if (all.has(segment)) throw new MailroomError('INTERNAL', `Two dashboard areas answer /${segment}`);
      all.set(segment, pageRoute);
    }
  }
  return all;
}

/** `/broadcasts/bc_1/` as `['broadcasts', 'bc_1']`, each segment decoded; undefined for broken escapes. */
function splitPath(rest: string): string[] | undefined {
  try {
    return rest
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}
