import {
  type ClaimedWebhookMessage,
  type EventRecord,
  type EventStore,
  MailroomError,
  type OutboxWrite,
  type WebhookAttemptRecord,
  type WebhookEndpointRecord,
  type WebhookMessageRecord,
} from '@mailroom/core';

/** The event outbox and the webhook queue of a memory store. */
export interface EventState {
  /** Events in insertion order; ids are time-ordered, listings sort by id. */
  events: Map<string, EventRecord>;
  endpoints: Map<string, WebhookEndpointRecord>;
  messages: Map<string, WebhookMessageRecord>;
  /** Messages not `delivered` or `failed`, so that a claim does not walk the settled ones. */
  openMessages: Set<WebhookMessageRecord>;
  attempts: WebhookAttemptRecord[];
}

/** A new, empty event state. */
export function emptyEventState(): EventState {
  return {
    events: new Map(),
    endpoints: new Map(),
    messages: new Map(),
    openMessages: new Set(),
    attempts: [],
  };
}

/**
 * Write an outbox into the state. Called inside the synchronous run of the method whose change it
 * belongs to, which makes the two atomic (nothing else runs in between).
 */
export function writeOutbox(s: EventState, outbox: OutboxWrite | undefined): void {
  if (!outbox) return;
  for (const event of outbox.events) s.events.set(event.id, structuredClone(event));
  for (const message of outbox.messages) {
    const stored = { ...message, nextAttemptAt: new Date(message.nextAttemptAt) };
    s.messages.set(message.id, stored);
    s.openMessages.add(stored);
  }
}

/** The `EventStore` members of the memory store, over the state `db()` returns. */
export function memoryEventStore(db: () => EventState): EventStore {
  return {
    async insertOutbox(outbox) {
      writeOutbox(db(), outbox);
    },
    async listEvents(projectId, filter, page) {
      const after = page.after ?? null;
      const rows = [...db().events.values()].filter(
        (e) =>
          e.projectId === projectId &&
          (after === null || e.id > after) &&
          (filter.types === undefined || filter.types.includes(e.type)) &&
          (filter.mailingRef === undefined || e.mailingRef === filter.mailingRef) &&
          (filter.address === undefined || e.address === filter.address) &&
          (filter.deliveryId === undefined || e.deliveryId === filter.deliveryId),
      );
      rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return structuredClone(rows.slice(0, page.limit));
    },

    async addWebhookEndpoint(endpoint) {
      const s = db();
      if (s.endpoints.has(endpoint.id)) {
        throw new MailroomError('CONFLICT', `webhook endpoint ${endpoint.id} exists`, { source: 'memory' });
      }
      s.endpoints.set(endpoint.id, structuredClone(endpoint));
    },
    async listWebhookEndpoints(projectId) {
      const rows = [...db().endpoints.values()].filter((e) => e.projectId === projectId);
      rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
      return structuredClone(rows);
    },
    async getWebhookEndpoint(id) {
      const found = db().endpoints.get(id);
      return found && structuredClone(found);
    },
    async updateWebhookEndpoint(projectId, id, patch, now) {
      const found = db().endpoints.get(id);
      if (found?.projectId !== projectId) return false;
      Object.assign(found, structuredClone(patch), { updatedAt: new Date(now) });
      return true;
    },
    async setWebhookEndpointHealth(id, failingSince) {
      const found = db().endpoints.get(id);
      if (!found) return undefined;
      if (failingSince === null) found.failingSince = null;
      else found.failingSince ??= new Date(failingSince);
      return found.failingSince && new Date(found.failingSince);
    },
    async setWebhookCircuit(id, openUntil) {
      const s = db();
      const found = s.endpoints.get(id);
      if (!found) return false;
      found.circuitOpenUntil = openUntil && new Date(openUntil);
      if (openUntil === null) return true;
      for (const m of s.openMessages) {
        if (m.endpointId === id && m.status === 'pending' && m.nextAttemptAt < openUntil) {
          m.nextAttemptAt = new Date(openUntil);
        }
      }
      return true;
    },
    async removeWebhookEndpoint(projectId, id) {
      const s = db();
      if (s.endpoints.get(id)?.projectId !== projectId) return false;
      return s.endpoints.delete(id);
    },

    async claimWebhookMessages({ now, limit, leaseMs, skipEndpoints = [], priority }) {
      const s = db();
      const t = now.getTime();
      const skip = new Set(skipEndpoints);
      const due: WebhookMessageRecord[] = [];
      for (const m of s.openMessages) {
        if (m.status !== 'pending' && m.status !== 'sending') {
          s.openMessages.delete(m);
          continue;
        }
        if (skip.has(m.endpointId) || (priority !== undefined && m.priority !== priority)) continue;
        const isDue =
          (m.status === 'pending' && m.nextAttemptAt.getTime() <= t) ||
          (m.status === 'sending' && m.leaseExpiresAt !== null && m.leaseExpiresAt.getTime() <= t);
        if (isDue) due.push(m);
      }
      due.sort(
        (a, b) =>
          a.priority - b.priority ||
          a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() ||
          (a.id < b.id ? -1 : 1),
      );
      return due.slice(0, Math.max(0, limit)).map((m) => {
        m.status = 'sending';
        m.leaseExpiresAt = new Date(t + leaseMs);
        m.leaseToken += 1;
        m.attempts += 1;
        m.updatedAt = new Date(t);
        return structuredClone(m) as ClaimedWebhookMessage;
      });
    },
    async completeWebhookMessages(items) {
      const s = db();
      return items.map(({ id, leaseToken, outcome, attempt }) => {
        const m = s.messages.get(id);
        if (m?.status !== 'sending' || m.leaseToken !== leaseToken) return false;
        m.status = outcome.status;
        m.leaseExpiresAt = null;
        if (outcome.status === 'pending') m.nextAttemptAt = new Date(outcome.nextAttemptAt ?? outcome.now);
        m.lastStatusCode = outcome.statusCode;
        m.lastError = outcome.error;
        m.updatedAt = new Date(outcome.now);
        if (attempt) s.attempts.push(structuredClone(attempt));
        return true;
      });
    },
    async releaseWebhookMessages(items) {
      const s = db();
      return items.map(({ id, leaseToken, nextAttemptAt }) => {
        const m = s.messages.get(id);
        if (m?.status !== 'sending' || m.leaseToken !== leaseToken) return false;
        m.status = 'pending';
        m.leaseExpiresAt = null;
        m.nextAttemptAt = new Date(nextAttemptAt);
        m.attempts = Math.max(0, m.attempts - 1);
        return true;
      });
    },
    async requeueWebhookMessage(projectId, id, now) {
      const s = db();
      const m = s.messages.get(id);
      if (m?.projectId !== projectId || (m.status !== 'delivered' && m.status !== 'failed')) return false;
      m.status = 'pending';
      m.nextAttemptAt = new Date(now);
      m.updatedAt = new Date(now);
      s.openMessages.add(m);
      return true;
    },
    async listWebhookMessages(projectId, filter) {
      const rows = [...db().messages.values()].filter(
        (m) =>
          m.projectId === projectId &&
          (filter.endpointId === undefined || m.endpointId === filter.endpointId) &&
          (filter.status === undefined || m.status === filter.status),
      );
      rows.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : -1));
      return structuredClone(rows.slice(0, filter.limit));
    },
    async listWebhookAttempts(projectId, filter) {
      const rows = db().attempts.filter(
        (a) =>
          a.projectId === projectId &&
          (filter.endpointId === undefined || a.endpointId === filter.endpointId) &&
          (filter.messageId === undefined || a.messageId === filter.messageId),
      );
      rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
      return structuredClone(rows.slice(0, filter.limit));
    },
    async webhookQueueState() {
      let oldestPendingAt: Date | undefined;
      let nextDueAt: Date | undefined;
      for (const m of db().openMessages) {
        if (m.status !== 'pending' && m.status !== 'sending') continue;
        if (!oldestPendingAt || m.createdAt < oldestPendingAt) oldestPendingAt = m.createdAt;
        if (m.status === 'pending' && (!nextDueAt || m.nextAttemptAt < nextDueAt))
          nextDueAt = m.nextAttemptAt;
      }
      return {
        oldestPendingAt: oldestPendingAt && new Date(oldestPendingAt),
        nextDueAt: nextDueAt && new Date(nextDueAt),
      };
    },
  };
}
