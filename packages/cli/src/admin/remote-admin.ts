import { MailroomApiError, type MailroomClient } from '@mailroom/client';
import { ERROR_CODES, type ErrorCode, MailroomError } from '@mailroom/core';
import type { AdminOperations } from './admin-operations.js';
import { remoteAutomations } from './automation-operations.js';
import { remoteForms } from './form-operations.js';
import { remotePauses } from './pause-operations.js';
import { remoteReceiving } from './receiving-operations.js';
import { remoteResources } from './remote-resources.js';
import { domainView, webhookView } from './remote-views.js';
import { remoteTopics } from './topic-operations.js';

/**
 * The admin operations through a server's HTTP API, for the project of the client's key: webhooks and
 * domains here, the management routes (templates, senders, suppressions, keys, audience, status reads)
 * in remote-resources.ts.
 */
export function remoteAdmin(client: MailroomClient, url: string): AdminOperations {
  const call = <T>(work: () => Promise<T>): Promise<T> => translated(url, work);
  return {
    remote: true,
    target: `--url ${url} --key $MAILROOM_KEY`,
    webhooks: {
      add: (input) =>
        call(async () => {
          // The event types are checked by the server, as the engine checks them on this machine.
          const body = input as Parameters<MailroomClient['webhooks']['add']>[0];
          const added = await client.webhooks.add(body);
          return { endpoint: webhookView(added.webhook), secret: added.secret };
        }),
      list: () => call(async () => (await client.webhooks.list()).webhooks.map(webhookView)),
      remove: (id) =>
        call(async () => {
          await client.webhooks.remove(id);
        }),
      setEnabled: (id, enabled) =>
        call(async () => webhookView((await client.webhooks.setEnabled(id, enabled)).webhook)),
    },
    domains: {
      add: (name, options) =>
        call(async () => domainView((await client.domains.add({ domain: name, ...options })).domain)),
      list: () => call(async () => (await client.domains.list()).domains.map(domainView)),
      get: (name) => call(async () => domainView((await client.domains.get(name)).domain)),
      verify: (name) => call(async () => domainView((await client.domains.verify(name)).domain)),
      rotateDkim: (name, options) =>
        call(async () => domainView((await client.domains.rotateDkim(name, options)).domain)),
    },
    ...remoteResources(client, call),
    pauses: remotePauses(client, call),
    topics: remoteTopics(client, call),
    automations: remoteAutomations(client, call),
    receiving: remoteReceiving(client, call),
    forms: remoteForms(client, call),
  };
}

/**
 * Runs a call, turning the server's refusal into the `MailroomError` the engine would have thrown on
 * this machine (same code, same message: the CLI prints it the same way), and a server that cannot be
 * reached into an error that names the URL.
 */
async function translated<T>(url: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MailroomApiError) {
      const code: ErrorCode = error.code in ERROR_CODES ? error.code : 'INTERNAL';
      throw new MailroomError(code, error.message, {
        cause: error,
        ...(error.body.issues ? { issues: error.body.issues } : {}),
        ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
      });
    }
    if (error instanceof MailroomError) throw error;
    throw new MailroomError('INTERNAL', `cannot reach the Mailroom API at ${url}`, { cause: error });
  }
}
