import type { DomainRecord, DomainStore } from '@mailroom/core';
import { clone, cloneMaybe } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, conflict, key } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/**
 * `DomainStore` in memory: domains with their keys in one record each. Every method checks and writes
 * within one synchronous run, which makes the compare-and-sets atomic against the others in this process.
 */
export function memoryDomainStore(db: () => State): DomainStore {
  const byName = (s: State, projectId: string, domain: string): DomainRecord | undefined => {
    const id = s.domainIdByName.get(key(projectId, domain));
    return id === undefined ? undefined : s.domains.get(id);
  };

  return {
    async addDomain(domain) {
      const s = db();
      const k = key(domain.projectId, domain.domain);
      if (s.domains.has(domain.id) || s.domainIdByName.has(k)) {
        throw conflict(`domain ${domain.domain} exists`);
      }
      s.domains.set(domain.id, withSortedKeys(clone(domain)));
      s.domainIdByName.set(k, domain.id);
    },
    async getDomain(projectId, domain) {
      return cloneMaybe(byName(db(), projectId, domain));
    },
    async listDomains(projectId) {
      const rows = [...db().domains.values()].filter((d) => d.projectId === projectId);
      return clone(rows.sort((a, b) => compare(a.domain, b.domain)));
    },
    async removeDomain(projectId, domain) {
      const s = db();
      const found = byName(s, projectId, domain);
      if (!found) return false;
      s.domains.delete(found.id);
      s.domainIdByName.delete(key(projectId, domain));
      return true;
    },

    async claimDomainChecks({ now, limit, leaseMs }) {
      const t = now.getTime();
      const due = [...db().domains.values()]
        .filter((d) => d.nextCheckAt.getTime() <= t)
        .sort((a, b) => a.nextCheckAt.getTime() - b.nextCheckAt.getTime() || compare(a.id, b.id))
        .slice(0, limit);
      for (const d of due) {
        d.nextCheckAt = new Date(t + leaseMs);
        d.updatedAt = new Date(t);
      }
      return clone(due);
    },
    async recordDomainCheck(domainId, from, write) {
      const s = db();
      const d = s.domains.get(domainId);
      if (!d || d.state !== from) return false;
      d.state = write.state;
      d.findings = clone(write.findings);
      d.checkedAt = new Date(write.checkedAt);
      d.nextCheckAt = new Date(write.nextCheckAt);
      d.updatedAt = new Date(write.checkedAt);
      writeOutbox(s.outbox, write.outbox);
      return true;
    },

    async addDkimKey(domainId, dkimKey, now) {
      const d = db().domains.get(domainId);
      if (!d) return false;
      if (d.keys.some((k) => k.selector === dkimKey.selector)) {
        throw conflict(`domain ${d.domain} has a key ${dkimKey.selector}`);
      }
      d.keys.push(clone(dkimKey));
      withSortedKeys(d);
      d.updatedAt = new Date(now);
      return true;
    },
    async setDkimKeyState(domainId, selector, transition) {
      const d = db().domains.get(domainId);
      const found = d?.keys.find((k) => k.selector === selector);
      if (!d || !found || found.state !== transition.from) return false;
      found.state = transition.to;
      if (transition.to === 'active') found.activatedAt = new Date(transition.now);
      if (transition.to === 'retiring') found.retireAt = cloneMaybe(transition.retireAt) ?? null;
      if (transition.to === 'retired') found.sealedPrivateKey = null;
      d.updatedAt = new Date(transition.now);
      return true;
    },
  };
}

/** Keys oldest first, then by selector, as the contract returns them. */
function withSortedKeys(domain: DomainRecord): DomainRecord {
  domain.keys.sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compare(a.selector, b.selector),
  );
  return domain;
}
