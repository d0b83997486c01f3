import { hashedAddress } from '../base/address-hash.js';
import { foldAddress } from '../base/address-parts.js';
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
        // Stored folded (the store folds too): the view shows what is stored and matched.
        address: foldAddress(normalizeAddress(body.address)),
        reason: body.reason ?? 'manual',
        detail: body.detail ?? null,
        createdAt: clock.now(),
      };
      await store.addSuppression(suppression);
      return suppressionView(suppression);
    },

    async lift(auth, address) {
      const { project } = await resolveAuth(auth);
      const normalized = normalizeAddress(address);
      // An erased address is kept as its hash so that it is not mailed again by mistake: lifting the
      // suppression of the address lifts that too (the person came back).
      const [lifted, forgotten] = await Promise.all([
        store.removeSuppression(project.id, normalized),
        store.forgetErasedAddress(project.id, hashedAddress(project.id, normalized)),
      ]);
      if (!lifted && !forgotten) {
        throw new MailroomError('NOT_FOUND', `${address} is not suppressed in this project`);
      }
    },
  };
}

/** Suppressions are stored folded (`foldAddress`: ASCII letters lower-cased): a search follows suit. */
function searchText(q: string): string {
  return foldAddress(q.trim());
}

function suppressionView(s: SuppressionRecord): SuppressionView {
  return { address: s.address, reason: s.reason, detail: s.detail, createdAt: s.createdAt };
}
