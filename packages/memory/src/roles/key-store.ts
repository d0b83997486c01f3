import type { ApiKeyRecord, KeyStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { byCreatedAt, conflict } from '../memory-state.js';

/** `KeyStore` in memory, over the secrets map of `AccountStore`; each method runs in one synchronous step. */
export function memoryKeyStore(db: () => State): KeyStore {
  /** The stored key `id` of `projectId` (the live object, never handed out). */
  const find = (projectId: string, id: string): ApiKeyRecord | undefined => {
    for (const key of db().secrets.values()) if (key.id === id && key.projectId === projectId) return key;
    return undefined;
  };

  return {
    async listKeys(projectId) {
      const keys = [...db().secrets.values()].filter((k) => k.projectId === projectId);
      return clone(keys.sort(byCreatedAt));
    },
    async getKey(projectId, id) {
      const key = find(projectId, id);
      return key && clone(key);
    },
    async revokeKey(projectId, id, at) {
      const key = find(projectId, id);
      if (!key) return undefined;
      key.revokedAt ??= new Date(at);
      return clone(key);
    },
    async rotateKey(projectId, id, replacement, expiresAt, now) {
      const key = find(projectId, id);
      if (!key || key.revokedAt || key.replacedBy) return false;
      if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return false;
      const s = db();
      if (s.secrets.has(replacement.hash)) throw conflict('the secret hash exists');
      if ([...s.secrets.values()].some((k) => k.id === replacement.id)) throw conflict('the key id exists');
      key.expiresAt = new Date(expiresAt);
      key.replacedBy = replacement.id;
      s.secrets.set(replacement.hash, clone(replacement));
      return true;
    },
    async touchKey(id, at) {
      for (const key of db().secrets.values()) {
        if (key.id !== id) continue;
        if (!key.lastUsedAt || key.lastUsedAt.getTime() < at.getTime()) key.lastUsedAt = new Date(at);
        return;
      }
    },
  };
}
