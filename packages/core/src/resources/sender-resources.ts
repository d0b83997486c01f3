import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { normalizeAddress } from '../request/index.js';
import type { SenderRecord } from '../store/records.js';
import { clampPageLimit, pageOf } from './resource-paging.js';
import { parseResourceBody, senderAddSchema } from './resource-schemas.js';
import type { MailroomSenders, SenderView } from './resource-types.js';

/** The management API of a project's sender identities (see {@link MailroomSenders}). */
export function createSenderResources(
  ctx: BaseContext,
  resolveAuth: (auth: string | AuthContext) => Promise<AuthContext>,
): MailroomSenders {
  const { store, clock } = ctx;
  return {
    async list(auth, page = {}) {
      const { project } = await resolveAuth(auth);
      const limit = clampPageLimit(page.limit);
      const rows = await store.listSenders(project.id, { after: page.after ?? null, limit: limit + 1 });
      return pageOf(rows.map(senderView), limit, (s) => s.address);
    },

    async add(auth, input) {
      const { project } = await resolveAuth(auth);
      const body = parseResourceBody(senderAddSchema, input);
      const now = clock.now();
      const sender: SenderRecord = {
        id: newId('snd', now.getTime()),
        projectId: project.id,
        address: normalizeAddress(body.address),
        name: body.name?.trim() || null,
        dkim: null,
        createdAt: now,
      };
      await store.addSender(sender);
      return senderView(sender);
    },

    async remove(auth, address) {
      const { project } = await resolveAuth(auth);
      if (!(await store.removeSender(project.id, normalizeAddress(address)))) {
        throw new MailroomError('NOT_FOUND', `Sender ${address} is not an identity of this project`);
      }
    },
  };
}

/** A sender identity without its DKIM private key. */
export function senderView(s: SenderRecord): SenderView {
  return { address: s.address, name: s.name, dkimSelector: s.dkim?.selector ?? null, createdAt: s.createdAt };
}
