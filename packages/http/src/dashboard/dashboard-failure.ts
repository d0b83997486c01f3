import type { Logger } from '@mailroom/core';
import { ERROR_CODES, isMailroomError } from '@mailroom/core';
import type { NeutralResponse } from '../neutral/types.js';
import { errorPage } from '../pages/error-page.js';
import { html } from '../pages/html.js';
import { isScopeRefusal } from '../routes/route-access.js';
import { type Call, MethodNotAllowed } from './dashboard-call.js';
import { htmlPage, jsonData } from './dashboard-http.js';
import { frameOf } from './layout.js';

/**
 * The answer to a call that threw: a refusal's own status (JSON for a script, a page with the navigation
 * for a person), or 500 for a fault, which is logged without the request's headers or body.
 */
export function failureAnswer(call: Call, error: unknown, logger: Logger): NeutralResponse {
  const known = isMailroomError(error) && error.status < 500;
  const status = known ? error.status : ERROR_CODES.INTERNAL.status;
  if (!known) {
    // Never the headers (cookie) nor the body (a secret, on sign-in).
    logger.error(
      { requestId: call.requestId, method: call.req.method, path: call.req.path, err: describe(error) },
      'mailroom dashboard: request failed',
    );
  }
  const extra: Record<string, string> = {};
  if (error instanceof MethodNotAllowed) extra.allow = error.allow.join(', ');
  if (call.machine) {
    const res = jsonData(status, call.requestId, {
      code: known ? error.code : 'INTERNAL',
      statusCode: status,
    });
    return { ...res, headers: { ...res.headers, ...extra } };
  }
  return htmlPage(
    status,
    call.requestId,
    call.nonce,
    // A scope refusal says which scope the action needs; other refusals keep their fixed words.
    errorPage(frameOf(call.nonce, call.ctx), status, call.requestId, {
      text: isScopeRefusal(error) ? error.message : undefined,
      after: call.ctx && html`<p><a href="${call.ctx.root}/broadcasts">Back to the broadcasts</a></p>`,
    }),
    extra,
  );
}

function describe(error: unknown): unknown {
  if (!(error instanceof Error)) return { value: String(error) };
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(isMailroomError(error) ? { code: error.code } : {}),
  };
}
