import { isMailroomError, type Mailroom, type PreferenceSave } from '@mailroom/core';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import {
  type PreferenceNotice,
  preferencesPage,
  refusedPreferencesPage,
} from '../pages/contact/preferences-page.js';

/** The page's form: `_csrf`, `action` (its button) and one `topic` per ticked box. */
function readForm(req: NeutralRequest): URLSearchParams {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  // Anything but a form carries no CSRF token, so it is refused below like a forged form.
  if (type !== 'application/x-www-form-urlencoded' || !req.body) return new URLSearchParams();
  return new URLSearchParams(Buffer.from(req.body).toString('utf8'));
}

function actionOf(form: URLSearchParams): NonNullable<PreferenceSave['action']> {
  const action = form.get('action');
  return action === 'unsubscribe-all' || action === 'resubscribe' ? action : 'save';
}

/**
 * `/preferences/:token` (issue 38): no key, no cookie; the token is the contact's. GET and HEAD show the
 * page; POST saves its form (the page's CSRF token, else the page again with a notice and 403, nothing
 * written). A forged, altered or foreign token: 404; an erased contact's: 410; both as pages.
 */
export async function preferencesRoute(
  mailroom: Mailroom,
  req: NeutralRequest,
  requestId: string,
  token: string,
): Promise<NeutralResponse> {
  try {
    if (req.method !== 'POST')
      return preferencesPage(requestId, token, await mailroom.openPreferences(token));
    const form = readForm(req);
    const action = actionOf(form);
    try {
      const saved = await mailroom.savePreferences(token, {
        csrf: form.get('_csrf'),
        action,
        topics: form.getAll('topic'),
        ip: req.ip ?? null,
        userAgent: req.headers['user-agent'] ?? null,
      });
      const notice: PreferenceNotice = !saved.changed
        ? 'unchanged'
        : action === 'unsubscribe-all'
          ? 'unsubscribed'
          : action === 'resubscribe'
            ? 'resubscribed'
            : 'saved';
      return preferencesPage(requestId, token, saved, notice);
    } catch (error) {
      if (isMailroomError(error) && error.code === 'FORBIDDEN') {
        return preferencesPage(requestId, token, await mailroom.openPreferences(token), 'expired', 403);
      }
      throw error;
    }
  } catch (error) {
    // A person reads these in a browser: refusals as a page; faults go the usual way (logged, JSON 500).
    if (isMailroomError(error) && error.status < 500) return refusedPreferencesPage(requestId, error);
    throw error;
  }
}
