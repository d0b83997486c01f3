import type { AuthContext, Mailroom } from '@mailroom/core';
import type { AdminOperations } from './admin-operations.js';
import { localPauses } from './pause-operations.js';

/**
 * The admin operations on this machine's database: the engine's own calls for the project of `auth`.
 * The CLI is trusted like the admin API: it acts for the project without one of its secrets.
 */
export function localAdmin(mailroom: Mailroom, auth: AuthContext): AdminOperations {
  const projectId = auth.project.id;
  return {
    remote: false,
    target: `--project ${projectId}`,
    webhooks: {
      add: (input) => mailroom.webhooks.add(auth, input),
      list: () => mailroom.webhooks.list(auth),
      remove: (id) => mailroom.webhooks.remove(auth, id),
      setEnabled: (id, enabled) => mailroom.webhooks.setEnabled(auth, id, enabled),
    },
    domains: {
      add: (name, options) => mailroom.addDomain(auth, name, options),
      list: () => mailroom.listDomains(auth),
      get: (name) => mailroom.getDomain(auth, name),
      verify: (name) => mailroom.verifyDomain(auth, name),
      rotateDkim: (name, options) => mailroom.rotateDkim(auth, name, options),
    },
    pauses: localPauses(mailroom, auth),
    getMailing: (ref) => mailroom.getMailing(auth, ref),
    addSender: (input) => mailroom.admin.addSender(projectId, input),
    createTemplate: (input) => mailroom.admin.createTemplate(projectId, input),
    createAudienceGroup: (input) => mailroom.admin.createAudienceGroup(projectId, input),
  };
}
