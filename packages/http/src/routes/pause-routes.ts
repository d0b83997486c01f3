import type { PauseView } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type PauseRouteName = Extract<
  RouteName,
  | 'pauses'
  | 'broadcast-pause'
  | 'broadcast-resume'
  | 'sending-pause'
  | 'sending-resume'
  | 'destination-pause'
  | 'destination-resume'
>;

/** The fields a pause body may carry, per scope; any other is refused by name. */
const REASON_ONLY = ['reason'] as const;
const DESTINATION_FIELDS = ['reason', 'minutes', 'domains'] as const;

/**
 * Pause and resume (issue 31): `GET /pauses` (the project's pauses in force), `POST /broadcasts/:ref/pause|resume`,
 * `POST /sending/pause|resume` (the project's whole sending) and `POST /destinations/:name/pause|resume`. Every
 * answer carries the pauses in force after the call. The body of a pause is optional; a resume takes none.
 */
export const PAUSE_ROUTES = {
  async pauses({ mailroom, auth, requestId }) {
    return answer(requestId, 'Pauses in force', await mailroom.listPauses(auth));
  },

  async 'broadcast-pause'(call) {
    const { reason } = bodyOf(call, REASON_ONLY);
    const pauses = await call.mailroom.pauseBroadcast(call.auth, call.params.ref ?? '', optional({ reason }));
    return answer(call.requestId, 'Broadcast paused: deliveries in flight finish, no other is sent', pauses);
  },

  async 'broadcast-resume'({ mailroom, auth, requestId, params }) {
    const pauses = await mailroom.resumeBroadcast(auth, params.ref ?? '');
    return answer(requestId, 'Broadcast resumed (if it was paused)', pauses);
  },

  async 'sending-pause'(call) {
    const { reason } = bodyOf(call, REASON_ONLY);
    const pauses = await call.mailroom.pauseSending(call.auth, optional({ reason }));
    return answer(call.requestId, 'Sending paused: no delivery of the project is sent', pauses);
  },

  async 'sending-resume'({ mailroom, auth, requestId }) {
    return answer(requestId, 'Sending resumed (if it was paused)', await mailroom.resumeSending(auth));
  },

  async 'destination-pause'(call) {
    const { reason, minutes, domains } = bodyOf(call, DESTINATION_FIELDS);
    const pauses = await call.mailroom.pauseDestination(
      call.auth,
      call.params.name ?? '',
      optional({ reason, minutes, domains }),
    );
    return answer(call.requestId, 'Destination paused', pauses);
  },

  async 'destination-resume'({ mailroom, auth, requestId, params }) {
    const pauses = await mailroom.resumeDestination(auth, params.name ?? '');
    return answer(requestId, 'Destination resumed (if it was paused)', pauses);
  },
} satisfies Record<PauseRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

/** The fields of an optional pause body, their types checked here (their values by the engine). */
interface PauseBody {
  reason?: string;
  minutes?: number;
  domains?: string[];
}

function answer(requestId: string, message: string, pauses: PauseView[]): NeutralResponse {
  return successResponse(requestId, message, { pauses });
}

/** An empty body is no option at all; otherwise a JSON object of `allowed` fields only. */
function bodyOf(call: ProjectCall, allowed: readonly (keyof PauseBody)[]): PauseBody {
  if ((call.req.body?.byteLength ?? 0) === 0) return {};
  const body = call.readJson();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MailroomError('VALIDATION_FAILED', 'The body must be a JSON object');
  }
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!(allowed as readonly string[]).includes(key)) {
      const message = `Unknown field \`${key}\`; expected ${allowed.map((a) => `\`${a}\``).join(', ')}`;
      invalid(key, message, 'unrecognized_keys');
    }
  }
  const { reason, minutes, domains } = fields;
  if (reason !== undefined && reason !== null && typeof reason !== 'string') {
    invalid('reason', '`reason` must be a string');
  }
  if (minutes !== undefined && typeof minutes !== 'number') invalid('minutes', '`minutes` must be a number');
  if (domains !== undefined && !(Array.isArray(domains) && domains.every((d) => typeof d === 'string'))) {
    invalid('domains', '`domains` must be a list of domain names');
  }
  return {
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(typeof minutes === 'number' ? { minutes } : {}),
    ...(Array.isArray(domains) ? { domains: domains as string[] } : {}),
  };
}

/** The options without their undefined members (exact optional property types). */
function optional<T extends object>(options: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

function invalid(field: string, message: string, code = 'invalid_type'): never {
  throw new MailroomError('VALIDATION_FAILED', message, { issues: [{ code, path: [field], message }] });
}
