import type { AuthContext, Mailroom } from '@mailroom/core';
import type { AdminOperations } from './admin-operations.js';
import { localAutomations } from './automation-operations.js';
import { localForms } from './form-operations.js';
import { localPauses } from './pause-operations.js';
import { localReceiving } from './receiving-operations.js';
import { localTopics } from './topic-operations.js';

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
    topics: localTopics(mailroom, auth),
    automations: localAutomations(mailroom, auth),
    receiving: localReceiving(mailroom, auth),
    forms: localForms(mailroom, auth),
    getMailing: (ref) => mailroom.getMailing(auth, ref),
    listBroadcasts: (page) => mailroom.listMailings(auth, 'broadcast', page),
    getMessage: (ref) => mailroom.getMessage(auth, ref),
    senders: {
      list: (page) => mailroom.senders.list(auth, page),
      add: (input) => mailroom.senders.add(auth, input),
      remove: (address) => mailroom.senders.remove(auth, address),
    },
    suppressions: {
      list: (query) => mailroom.suppressions.list(auth, query),
      add: (input) => mailroom.suppressions.add(auth, input),
      lift: (address) => mailroom.suppressions.lift(auth, address),
    },
    keys: {
      create: (options) => mailroom.keys.create(auth, options),
      list: () => mailroom.keys.list(auth),
      revoke: (id) => mailroom.keys.revoke(auth, id),
      rotate: (id, options) => mailroom.keys.rotate(auth, id, options),
    },
    audience: {
      listGroups: () => mailroom.audience.listGroups(auth),
      createGroup: (input) => mailroom.audience.createGroup(auth, input),
      listMembers: (ref, page) => mailroom.audience.listMembers(auth, ref, page),
      listProfiles: (search) => mailroom.audience.listProfiles(auth, search),
      getProfile: (address) => mailroom.audience.getProfile(auth, address),
      startImport: (request) => mailroom.audience.startImport(auth, request),
      getImport: (id) => mailroom.audience.getImport(auth, id),
    },
    templates: {
      list: (page) => mailroom.templates.list(auth, page),
      get: (ref) => mailroom.templates.get(auth, ref),
      preview: (ref, sample) => mailroom.templates.preview(auth, ref, sample),
    },
    async storeTemplate(input) {
      // The admin call names the file in its errors; the view is then the API's.
      await mailroom.admin.createTemplate(projectId, input);
      return mailroom.templates.get(auth, input.ref);
    },
  };
}
