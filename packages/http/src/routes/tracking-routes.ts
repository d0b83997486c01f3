import type { Mailroom } from '@mailroom/core';
import { isMailroomError } from '@mailroom/core';
import { errorResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';

/** A transparent 1x1 GIF (42 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Never cached: every load is a hit (proxies that cache anyway are what the machine verdict is for). */
const NO_STORE = 'no-store, no-cache, must-revalidate, private';

function metaOf(req: NeutralRequest) {
  return { userAgent: req.headers['user-agent'], ip: req.ip, method: req.method };
}

/**
 * `GET /t/c/:token`: 302 to the link's URL, as the mailing holds it (never from the request). The
 * destination gets no Referer (the token is nobody's business but ours). Any bad token: 404.
 */
export function trackClickResponse(
  mailroom: Mailroom,
  req: NeutralRequest,
  requestId: string,
  token: string,
): Promise<NeutralResponse> {
  return refusalsAnswered(requestId, async () => {
    const url = await mailroom.trackClick(token, metaOf(req));
    return {
      status: 302,
      headers: {
        // As the browser would have navigated to the untracked link: non-ASCII percent-encoded (a header
        // carries bytes, and an emoji would not even fit one).
        location: new URL(url).href,
        'cache-control': NO_STORE,
        'referrer-policy': 'no-referrer',
        'content-type': 'text/plain; charset=utf-8',
        'x-request-id': requestId,
      },
      body: '',
    };
  });
}

/** `GET /t/o/:token.gif`: the pixel, never cached. Any bad token: 404. */
export function trackOpenResponse(
  mailroom: Mailroom,
  req: NeutralRequest,
  requestId: string,
  token: string,
): Promise<NeutralResponse> {
  return refusalsAnswered(requestId, async () => {
    await mailroom.trackOpen(token, metaOf(req));
    return {
      status: 200,
      headers: {
        'content-type': 'image/gif',
        'content-length': String(PIXEL.length),
        'cache-control': NO_STORE,
        'x-request-id': requestId,
      },
      body: '',
      bytes: PIXEL,
    };
  });
}

/** The engine's refusals (a bad token: 404) as responses; faults go on to the handler (logged, 500). */
async function refusalsAnswered(
  requestId: string,
  run: () => Promise<NeutralResponse>,
): Promise<NeutralResponse> {
  try {
    return await run();
  } catch (error) {
    if (isMailroomError(error) && error.status < 500) return errorResponse(requestId, error);
    throw error;
  }
}
