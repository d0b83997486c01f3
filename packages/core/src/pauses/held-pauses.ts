import { domainOf } from '../base/address-parts.js';
import type { PauseRecord } from '../store/pause-store.js';
import type { PauseTarget } from './pause-control.js';

/**
 * What pauses cover, as one process knows it: the store's pauses of each project at the guard's last
 * round, and the pauses this process wrote since (held from the moment it decided, so its own claimed
 * deliveries stop at once). `held` runs for every delivery before it is sent: set lookups only.
 */
export interface HeldPauses {
  /** True when a pause covers the delivery: its broadcast (`mailingId`), its project or its domain. */
  held(projectId: string, mailingId: string, address: string): boolean;
  heldMailing(projectId: string, mailingId: string): boolean;
  heldDomain(projectId: string, domain: string): boolean;
  heldProject(projectId: string): boolean;
  /** This process is writing a pause of `target`: held from now. */
  hold(target: PauseTarget): void;
  /** The write of `target` ended (written, or paused already) at `at` (ms). */
  written(target: PauseTarget, at: number): void;
  /** The write of `target` failed: no longer held on this process's word. */
  release(target: PauseTarget): void;
  /**
   * The project's pauses in force as the store listed them, read from `readAt` (ms). A pause this
   * process wrote after that read began stays held; the rest is the store's word.
   */
  replace(projectId: string, pauses: readonly PauseRecord[], readAt: number): void;
}

/** A project's pauses in the store. */
interface StorePauses {
  project: boolean;
  mailings: Set<string>;
  domains: Set<string>;
}

/** Held pauses, empty. */
export function createHeldPauses(): HeldPauses {
  const stored = new Map<string, StorePauses>();
  /** This process's own pauses: key -> when its write ended (null: being written). */
  const own = new Map<string, number | null>();
  const keyOf = (target: PauseTarget): string[] => {
    if (target.scope === 'broadcast') return [`b ${target.mailing?.id ?? ''}`];
    if (target.scope === 'project') return [`p ${target.projectId}`];
    const domains = target.domains ?? [target.destination ?? ''];
    return domains.map((domain) => `d ${target.projectId} ${domain.toLowerCase()}`);
  };

  const heldMailing = (projectId: string, mailingId: string) =>
    stored.get(projectId)?.mailings.has(mailingId) === true || (own.size > 0 && own.has(`b ${mailingId}`));
  const heldProject = (projectId: string) =>
    stored.get(projectId)?.project === true || (own.size > 0 && own.has(`p ${projectId}`));
  const heldDomain = (projectId: string, domain: string) =>
    stored.get(projectId)?.domains.has(domain) === true ||
    (own.size > 0 && own.has(`d ${projectId} ${domain}`));

  return {
    held(projectId, mailingId, address) {
      const s = stored.get(projectId);
      if (
        own.size === 0 &&
        (s === undefined || (!s.project && s.mailings.size === 0 && s.domains.size === 0))
      )
        return false;
      return (
        heldProject(projectId) ||
        heldMailing(projectId, mailingId) ||
        heldDomain(projectId, domainOf(address))
      );
    },
    heldMailing,
    heldDomain,
    heldProject,
    hold(target) {
      for (const key of keyOf(target)) own.set(key, null);
    },
    written(target, at) {
      for (const key of keyOf(target)) own.set(key, at);
    },
    release(target) {
      for (const key of keyOf(target)) own.delete(key);
    },
    replace(projectId, pauses, readAt) {
      const s: StorePauses = { project: false, mailings: new Set(), domains: new Set() };
      for (const record of pauses) {
        if (record.scope === 'project') s.project = true;
        else if (record.scope === 'broadcast') s.mailings.add(record.target);
        else for (const domain of record.domains) s.domains.add(domain);
      }
      stored.set(projectId, s);
      for (const [key, at] of own) if (at !== null && at < readAt) own.delete(key);
    },
  };
}
