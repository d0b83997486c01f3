import { type Capability, storeRole } from '../context/capability.js';
import type { DomainStore } from '../store/domain-store.js';
import type { DomainSigning } from './domain-signing.js';
import { createDomains } from './domains.js';
import type { DomainsEngineOptions, DomainsFacade } from './domains-facade.js';

/** What sender domains lend the other parts: the signing side (keys, the sending policy). */
export interface DomainsProvides {
  domains: DomainSigning;
}

/**
 * Sender domains, plugged into the engine through the capability seam: options `domains` and `warmup`,
 * the store's `DomainStore` role, the domain events (written through the outbox), the facade methods, the
 * signing side lent to accept and delivery, and the scheduled re-checks that run with the worker.
 */
export const domainsCapability: Capability<DomainsEngineOptions, DomainsFacade, DomainsProvides> = {
  name: 'domains',
  storeRole: storeRole<DomainStore>()(
    'addDomain',
    'getDomain',
    'listDomains',
    'removeDomain',
    'claimDomainChecks',
    'recordDomainCheck',
    'addDkimKey',
    'setDkimKeyState',
  ),
  create({ ctx, resolveAuth }, options) {
    const domains = createDomains(ctx, options.domains, options.warmup);
    const projectOf = async (auth: Parameters<typeof resolveAuth>[0]) => (await resolveAuth(auth)).project.id;
    const facade: DomainsFacade = {
      addDomain: async (auth, domain, addOptions) => domains.add(await projectOf(auth), domain, addOptions),
      listDomains: async (auth) => domains.list(await projectOf(auth)),
      getDomain: async (auth, domain) => domains.get(await projectOf(auth), domain),
      verifyDomain: async (auth, domain) => domains.verify(await projectOf(auth), domain),
      rotateDkim: async (auth, domain, rotateOptions) =>
        domains.rotate(await projectOf(auth), domain, rotateOptions),
      async removeDomain(auth, domain) {
        await domains.remove(await projectOf(auth), domain);
      },
      listDomainWarnings: async (auth) => domains.signing.warnings(await projectOf(auth)),
      async checkDueDomains() {
        await ctx.ready();
        return domains.schedule.runOnce();
      },
    };
    return { facade, provides: { domains: domains.signing }, task: domains.schedule };
  },
};
