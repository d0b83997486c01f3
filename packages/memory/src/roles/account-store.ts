import type { AccountStore } from '@mailroom/core';
import { clone, cloneMaybe } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { byCreatedAt, compare, conflict, exists, key } from '../memory-state.js';

/** `AccountStore` in memory. Projects, secrets, sender identities, templates and settings; every method checks and writes within one synchronous run. */
export function memoryAccountStore(db: () => State): AccountStore {
  return {
    async createProject(project, secret) {
      const s = db();
      if (s.projects.has(project.id)) throw conflict(`project ${project.id} exists`);
      if (s.secrets.has(secret.hash)) throw conflict('the secret hash exists');
      if (hasKeyId(s, secret.id)) throw conflict('the key id exists');
      s.projects.set(project.id, clone(project));
      s.secrets.set(secret.hash, clone(secret));
    },
    async addProjectSecret(secret) {
      const s = db();
      if (s.secrets.has(secret.hash)) throw conflict('the secret hash exists');
      if (hasKeyId(s, secret.id)) throw conflict('the key id exists');
      s.secrets.set(secret.hash, clone(secret));
    },
    async findSecret(hash) {
      const s = db();
      const secret = s.secrets.get(hash);
      const project = secret && s.projects.get(secret.projectId);
      return secret && project ? clone({ project, secret }) : undefined;
    },
    async getProject(id) {
      return cloneMaybe(db().projects.get(id));
    },
    async listProjects() {
      return clone([...db().projects.values()].sort(byCreatedAt));
    },
    async addSender(sender) {
      const s = db();
      const k = key(sender.projectId, sender.address);
      if (s.senders.has(k)) throw exists(`sender ${sender.address}`, sender.projectId);
      s.senders.set(k, clone(sender));
    },
    async findSender(projectId, address) {
      return cloneMaybe(db().senders.get(key(projectId, address)));
    },
    async putTemplate(template) {
      db().templates.set(key(template.projectId, template.ref), clone(template));
    },
    async getTemplate(projectId, ref) {
      return cloneMaybe(db().templates.get(key(projectId, ref)));
    },
    async listTemplates(projectId) {
      const rows = [...db().templates.values()].filter((r) => r.projectId === projectId);
      return clone(rows.sort((a, b) => compare(a.ref, b.ref)));
    },
    async ensureSetting(name, value) {
      const settings = db().settings;
      const stored = settings.get(name);
      if (stored !== undefined) return stored;
      settings.set(name, value);
      return value;
    },
  };
}

/** Whether a key with this id exists (ids are unique across projects, as hashes are). */
function hasKeyId(s: State, id: string): boolean {
  for (const key of s.secrets.values()) if (key.id === id) return true;
  return false;
}
