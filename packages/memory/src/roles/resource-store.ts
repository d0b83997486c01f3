import type { ResourceStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, key } from '../memory-state.js';

/**
 * `ResourceStore` in memory: pages and removals of senders, templates and suppressions. Every method
 * checks and writes within one synchronous run, which makes the template compare-and-set atomic against
 * the others in this process.
 */
export function memoryResourceStore(db: () => State): ResourceStore {
  return {
    async listSenders(projectId, page) {
      return clone(pageOf([...db().senders.values()], projectId, page, (r) => r.address));
    },
    async removeSender(projectId, address) {
      return db().senders.delete(key(projectId, address));
    },
    async listTemplatePage(projectId, page) {
      return clone(pageOf([...db().templates.values()], projectId, page, (r) => r.ref));
    },
    async writeTemplateVersion(template, expectedVersion) {
      const templates = db().templates;
      const k = key(template.projectId, template.ref);
      const stored = templates.get(k);
      if ((stored?.version ?? null) !== expectedVersion) return false;
      templates.set(k, clone(template));
      return true;
    },
    async removeTemplate(projectId, ref) {
      return db().templates.delete(key(projectId, ref));
    },
    async listSuppressions(projectId, page) {
      const contains = page.contains ?? '';
      const rows = [...db().suppressions.values()].filter((r) => r.address.includes(contains));
      return clone(pageOf(rows, projectId, page, (r) => r.address));
    },
  };
}

/** The project's rows after `page.after` by `sortKey` (byte order), at most `page.limit`. */
function pageOf<T extends { projectId: string }>(
  rows: T[],
  projectId: string,
  page: { after?: string | null; limit: number },
  sortKey: (row: T) => string,
): T[] {
  const after = page.after ?? null;
  return rows
    .filter((r) => r.projectId === projectId && (after === null || compare(sortKey(r), after) > 0))
    .sort((a, b) => compare(sortKey(a), sortKey(b)))
    .slice(0, page.limit);
}
