import type { ReceivingRouteRecord, ReceivingStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, exists } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/** `ReceivingStore` in memory: routes and received messages, each a map by id. */
export function memoryReceivingStore(db: () => State): ReceivingStore {
  const byDomainPattern = (a: ReceivingRouteRecord, b: ReceivingRouteRecord) =>
    compare(a.domain, b.domain) || compare(a.pattern, b.pattern);
  return {
    async createReceivingRoute(route) {
      const { routes } = db().receiving;
      for (const r of routes.values()) {
        if (r.domain === route.domain && r.pattern === route.pattern) {
          throw exists(`route ${route.pattern}@${route.domain}`, r.projectId);
        }
      }
      if (routes.has(route.id)) throw exists(`route ${route.id}`, route.projectId);
      routes.set(route.id, clone(route));
    },
    async listReceivingRoutes(projectId) {
      return [...db().receiving.routes.values()]
        .filter((r) => r.projectId === projectId)
        .sort(byDomainPattern)
        .map((r) => clone(r));
    },
    async findReceivingRoutes(domain) {
      return [...db().receiving.routes.values()]
        .filter((r) => r.domain === domain)
        .sort(byDomainPattern)
        .map((r) => clone(r));
    },
    async deleteReceivingRoute(projectId, id) {
      const { routes } = db().receiving;
      const found = routes.get(id);
      if (!found || found.projectId !== projectId) return false;
      return routes.delete(id);
    },
    async saveReceivedMessage(message, outbox, raw) {
      const s = db();
      if (s.receiving.messages.has(message.id))
        throw exists(`received message ${message.id}`, message.projectId);
      s.receiving.messages.set(message.id, clone(message));
      if (raw) s.receiving.raw.set(message.id, new Uint8Array(raw));
      writeOutbox(s.outbox, outbox);
    },
    async readReceivedRaw(projectId, id) {
      const s = db();
      if (s.receiving.messages.get(id)?.projectId !== projectId) return undefined;
      const raw = s.receiving.raw.get(id);
      return raw ? new Uint8Array(raw) : undefined;
    },
    async pruneReceivedMessages(now, limit) {
      const s = db();
      const due = [...s.receiving.messages.values()]
        .filter((m) => m.expiresAt !== null && m.expiresAt.getTime() <= now.getTime())
        .slice(0, limit);
      for (const m of due) {
        s.receiving.messages.delete(m.id);
        s.receiving.raw.delete(m.id);
      }
      return due.length;
    },
    async getReceivingSettings(projectId) {
      const found = db().receiving.settings.get(projectId);
      return found ? clone(found) : undefined;
    },
    async putReceivingSettings(settings) {
      db().receiving.settings.set(settings.projectId, clone(settings));
    },
    async getReceivedMessage(projectId, id) {
      const found = db().receiving.messages.get(id);
      return found && found.projectId === projectId ? clone(found) : undefined;
    },
    async listReceivedMessages(projectId, page) {
      return [...db().receiving.messages.values()]
        .filter((m) => m.projectId === projectId && (!page.before || m.id < page.before))
        .sort((a, b) => compare(b.id, a.id))
        .slice(0, page.limit)
        .map((m) => clone(m));
    },
  };
}
