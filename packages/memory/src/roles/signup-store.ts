import type { SignupStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, exists, key } from '../memory-state.js';

/**
 * `SignupStore` in memory: forms by ref, signups by id, and the signup id of each
 * key(key(projectId, formRef), address).
 */
export function memorySignupStore(db: () => State): SignupStore {
  return {
    async createForm(form) {
      const s = db();
      if (s.signup.forms.has(form.ref)) throw exists(`form ${form.ref}`, form.projectId);
      s.signup.forms.set(form.ref, clone(form));
    },
    async findForm(ref) {
      const form = db().signup.forms.get(ref);
      return form ? clone(form) : undefined;
    },
    async listForms(projectId) {
      return [...db().signup.forms.values()]
        .filter((f) => f.projectId === projectId)
        .sort((a, b) => compare(a.ref, b.ref))
        .map((f) => clone(f));
    },
    async replaceForm(form) {
      const s = db();
      const stored = s.signup.forms.get(form.ref);
      if (!stored || stored.projectId !== form.projectId) return false;
      s.signup.forms.set(form.ref, clone(form));
      return true;
    },
    async deleteForm(projectId, ref) {
      const s = db();
      const stored = s.signup.forms.get(ref);
      if (!stored || stored.projectId !== projectId) return false;
      return s.signup.forms.delete(ref);
    },
    async openSignup(signup) {
      const s = db();
      const k = key(key(signup.projectId, signup.formRef), signup.address);
      const id = s.signup.idByKey.get(k);
      const stored = id === undefined ? undefined : s.signup.signups.get(id);
      if (stored) return clone(stored);
      s.signup.signups.set(signup.id, clone(signup));
      s.signup.idByKey.set(k, signup.id);
      return clone(signup);
    },
    async getSignup(id) {
      const signup = db().signup.signups.get(id);
      return signup ? clone(signup) : undefined;
    },
    async claimSignupSend(id, now, notAfter) {
      const signup = db().signup.signups.get(id);
      if (!signup) return false;
      if (signup.sentAt !== null && signup.sentAt.getTime() > notAfter.getTime()) return false;
      signup.sentAt = new Date(now);
      return true;
    },
    async confirmSignup(id, now, groupId) {
      const s = db();
      const signup = s.signup.signups.get(id);
      if (!signup) return false;
      if (groupId !== null) {
        const members = s.members.get(groupId) ?? new Set<string>();
        members.add(signup.address);
        s.members.set(groupId, members);
      }
      if (signup.status !== 'pending') return false;
      signup.status = 'confirmed';
      signup.confirmedAt = new Date(now);
      return true;
    },
  };
}
