import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { normalizeAddress } from '../request/index.js';
import type { SuppressionRecord } from '../store/records.js';
import { clampPageLimit, pageOf } from './resource-paging.js';
import { parseResourceBody, suppressionAddSchema } from './resource-schemas.js';
import type { MailroomSuppressions, SuppressionView } from './resource-types.js';

/** The management API of a project's suppression list (see {@link MailroomSuppressions}). */
export function createSuppressionResources(
  ctx: BaseContext,
  resolveAuth: (auth: string | AuthContext) => Promise<AuthContext>,
): MailroomSuppressions {
  const { store, clock } = ctx;
  return {
    async list(auth, query = {}) {
      const { project } = await resolveAuth(auth);
      const limit = clampPageLimit(query.limit);
      const contains = searchText(query.q ?? '');
      const rows = await store.listSuppressions(project.id, {
        after: query.after ?? null,
        limit: limit + 1,
        ...(contains !== '' ? { contains } : {}),
      });
      return pageOf(rows.map(suppressionView), limit, (s) => s.address);
    },

    async add(auth, input) {
      const { project } = await resolveAuth(auth);
      const body = parseResourceBody(suppressionAddSchema, input);
      const suppression: SuppressionRecord = {
        projectId: project.id,
        address: normalizeAddress(body.address),
        reason: body.reason ?? 'manual',
        detail: body.detail ?? null,
        createdAt: clock.now(),
      };
      await store.addSuppression(suppression);
      return suppressionView(suppression);
    },

    async lift(auth, address) {
      const { project } = await resolveAuth(auth);
      if (!(await store.removeSuppression(project.id, normalizeAddress(address)))) {
        throw new MailroomError('NOT_FOUND', `${address} is not suppressed in this project`);
      }
    },
  };
}

/** Addresses are stored with their domain lower-cased: the part of a search after `@` follows suit. */
function searchText(q: string): string {
  const text = q.trim();
  const at = text.indexOf('@');
  return at < 0 ? text : text.slice(0, at + 1) + text.slice(at + 1).toLowerCase();
}

function suppressionView(s: SuppressionRecord): SuppressionView {
  return { address: s.address, reason: s.reason, detail: s.detail, createdAt: s.createdAt };
}
