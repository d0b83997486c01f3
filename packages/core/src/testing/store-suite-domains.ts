/** Store conformance: the DomainStore role (sending domains, their DKIM keys, their checks). */
import { afterEach, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../domains/domain-finding.js';
import type { DomainCheckWrite, DomainRecord } from '../store/domain-store.js';
import type { Store } from '../store/store.js';
import { makeDkimKey, makeDomain, testTime } from './store-fixtures.js';
import { makeEndpoint, makeEvent, makeWebhookMessage } from './store-suite-events.js';
import { expectStoreError, type StoreSuiteContext, seedProject, sorted } from './store-suite-helpers.js';

const LEASE = 60_000;

/** Findings with every shape a check writes: optional members, empty and non-ASCII answers. */
function richFindings(domain: string): DomainFinding[] {
  return [
    {
      kind: 'dkim',
      type: 'TXT',
      name: `mr20300101._domainkey.${domain}`,
      state: 'missing',
      expected: 'v=DKIM1; k=rsa; p=MIIBIjANBg',
      actual: [],
      problem: `No DKIM key is published at mr20300101._domainkey.${domain}`,
    },
    {
      kind: 'spf',
      type: 'TXT',
      name: domain,
      state: 'wrong',
      expected: 'v=spf1 ip4:203.0.113.7 ~all',
      actual: ['v=spf1 +all', 'ünïcode "quoted" \\ back'],
      problem: 'lets any address send',
    },
    { kind: 'return-path-mx', type: 'MX', name: `bounces.${domain}`, state: 'no-answer', actual: ['10 mx'] },
    {
      kind: 'bimi',
      type: 'TXT',
      name: `default._bimi.${domain}`,
      state: 'found',
      actual: [],
      optional: true,
    },
  ];
}

/** A check's write at `offset` ms, due again an hour later. */
function checkWrite(
  domain: DomainRecord,
  state: DomainRecord['state'],
  offset = 0,
  extra: Partial<DomainCheckWrite> = {},
): DomainCheckWrite {
  return {
    state,
    findings: richFindings(domain.domain),
    checkedAt: testTime(offset),
    nextCheckAt: testTime(offset + 3_600_000),
    ...extra,
  };
}

/**
 * Registers the tests of sending domains; with `connect` (a second store on the same backend, as another
 * process), also the race of check claims between processes.
 */
export function describeDomains(
  ctx: StoreSuiteContext,
  connect?: (store: Store) => Promise<Store> | Store,
): void {
  describe('domains', () => {
    it('addDomain stores every field, keys oldest first; getDomain and listDomains give them back', async () => {
      const { project } = await seedProject(ctx.store);
      const keys = [
        makeDkimKey({ selector: 'mr20300102', createdAt: testTime(2_000), algorithm: 'ed25519' }),
        makeDkimKey({
          selector: 'mr20300101',
          state: 'active',
          createdAt: testTime(1_000),
          activatedAt: testTime(1_500),
        }),
        makeDkimKey({
          selector: 'old',
          state: 'retired',
          sealedPrivateKey: null,
          createdAt: testTime(0),
          activatedAt: testTime(10),
          retireAt: testTime(900),
        }),
      ];
      const domain = makeDomain(project.id, {
        domain: 'b-acme.example.com',
        state: 'verified',
        returnPath: 'bounces.b-acme.example.com',
        returnPathMx: 'inbound.example.net',
        dmarcReports: 'reports@dmarc.example.net',
        keys,
        findings: richFindings('b-acme.example.com'),
        checkedAt: testTime(3_000),
        nextCheckAt: testTime(90_000),
        updatedAt: testTime(3_000),
      });
      await ctx.store.addDomain(domain);
      const other = makeDomain(project.id, { domain: 'a-acme.example.com', keys: [] });
      await ctx.store.addDomain(other);
      const expected = { ...domain, keys: [keys[2], keys[1], keys[0]] };
      expect(await ctx.store.getDomain(project.id, domain.domain)).toEqual(expected);
      expect(await ctx.store.listDomains(project.id)).toEqual([other, expected]);
    });

    it('a domain belongs to its project; another project may add the same name', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: stranger } = await seedProject(ctx.store);
      const domain = makeDomain(project.id, { domain: 'shared.example.com' });
      await ctx.store.addDomain(domain);
      expect(await ctx.store.getDomain(stranger.id, domain.domain)).toBeUndefined();
      expect(await ctx.store.listDomains(stranger.id)).toEqual([]);
      expect(await ctx.store.removeDomain(stranger.id, domain.domain)).toBe(false);
      const theirs = makeDomain(stranger.id, { domain: 'shared.example.com' });
      await ctx.store.addDomain(theirs);
      expect(await ctx.store.getDomain(stranger.id, domain.domain)).toEqual(theirs);
      expect(await ctx.store.getDomain(project.id, domain.domain)).toEqual(domain);
    });

    it('addDomain is CONFLICT for a name the project has, or an id that exists, and writes nothing', async () => {
      const { project } = await seedProject(ctx.store);
      const domain = makeDomain(project.id);
      await ctx.store.addDomain(domain);
      await expectStoreError(
        ctx.store.addDomain(makeDomain(project.id, { domain: domain.domain })),
        'CONFLICT',
      );
      await expectStoreError(
        ctx.store.addDomain(makeDomain(project.id, { id: domain.id, domain: 'other.example.com' })),
        'CONFLICT',
      );
      expect(await ctx.store.listDomains(project.id)).toEqual([domain]);
    });

    it('removeDomain deletes the domain and its keys; the name can be added again', async () => {
      const { project } = await seedProject(ctx.store);
      const domain = makeDomain(project.id, {
        keys: [makeDkimKey(), makeDkimKey({ createdAt: testTime(5) })],
      });
      await ctx.store.addDomain(domain);
      expect(await ctx.store.removeDomain(project.id, domain.domain)).toBe(true);
      expect(await ctx.store.getDomain(project.id, domain.domain)).toBeUndefined();
      expect(await ctx.store.removeDomain(project.id, domain.domain)).toBe(false);
      const again = makeDomain(project.id, { domain: domain.domain });
      await ctx.store.addDomain(again);
      expect((await ctx.store.getDomain(project.id, domain.domain))?.keys).toEqual(again.keys);
    });

    it('claimDomainChecks takes due domains of every project, earliest first, and leases them', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const late = makeDomain(project.id, { nextCheckAt: testTime(-1_000) });
      const early = makeDomain(other.id, { nextCheckAt: testTime(-5_000) });
      const now = makeDomain(project.id, { nextCheckAt: testTime(0) });
      const future = makeDomain(project.id, { nextCheckAt: testTime(1) });
      for (const d of [late, early, now, future]) await ctx.store.addDomain(d);
      const first = await ctx.store.claimDomainChecks({ now: testTime(0), limit: 2, leaseMs: LEASE });
      expect(sorted(first.map((d) => d.id))).toEqual(sorted([early.id, late.id]));
      for (const d of first) {
        expect(d.nextCheckAt).toEqual(testTime(LEASE));
        expect(d.updatedAt).toEqual(testTime(0));
        expect(d.keys).toEqual((d.id === early.id ? early : late).keys);
      }
      const second = await ctx.store.claimDomainChecks({ now: testTime(0), limit: 10, leaseMs: LEASE });
      expect(second.map((d) => d.id)).toEqual([now.id]);
      expect(
        await ctx.store.claimDomainChecks({ now: testTime(LEASE - 1), limit: 10, leaseMs: LEASE }),
      ).toEqual([{ ...future, nextCheckAt: testTime(2 * LEASE - 1), updatedAt: testTime(LEASE - 1) }]);
      const expired = await ctx.store.claimDomainChecks({ now: testTime(LEASE), limit: 10, leaseMs: LEASE });
      expect(sorted(expired.map((d) => d.id))).toEqual(sorted([early.id, late.id, now.id]));
    });

    it('concurrent claimers of domain checks get disjoint sets that cover every due domain', async () => {
      const { project } = await seedProject(ctx.store);
      const due = Array.from({ length: 24 }, (_, i) => makeDomain(project.id, { nextCheckAt: testTime(-i) }));
      for (const d of due) await ctx.store.addDomain(d);
      const claimed = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.claimDomainChecks({ now: testTime(0), limit: 5, leaseMs: LEASE }),
        ),
      );
      const ids = claimed.flat().map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      const rest = await ctx.store.claimDomainChecks({ now: testTime(0), limit: 100, leaseMs: LEASE });
      expect(sorted([...ids, ...rest.map((d) => d.id)])).toEqual(sorted(due.map((d) => d.id)));
    });

    it('recordDomainCheck writes only from the state given, with its outbox or nothing', async () => {
      const { project } = await seedProject(ctx.store);
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      const domain = makeDomain(project.id, { state: 'verified' });
      await ctx.store.addDomain(domain);
      const refused = makeEvent(project.id, { type: 'domain.failed' });
      const stale = checkWrite(domain, 'failed', 10, {
        outbox: { events: [refused], messages: [makeWebhookMessage(refused, endpoint.id)] },
      });
      expect(await ctx.store.recordDomainCheck(domain.id, 'pending', stale)).toBe(false);
      expect(await ctx.store.getDomain(project.id, domain.domain)).toEqual(domain);
      const failed = makeEvent(project.id, { type: 'domain.failed' });
      const write = checkWrite(domain, 'failed', 20, {
        outbox: { events: [failed], messages: [makeWebhookMessage(failed, endpoint.id)] },
      });
      expect(await ctx.store.recordDomainCheck(domain.id, 'verified', write)).toBe(true);
      expect(await ctx.store.getDomain(project.id, domain.domain)).toEqual({
        ...domain,
        state: 'failed',
        findings: write.findings,
        checkedAt: testTime(20),
        nextCheckAt: testTime(20 + 3_600_000),
        updatedAt: testTime(20),
      });
      expect((await ctx.store.listEvents(project.id, {}, { limit: 100 })).map((e) => e.id)).toEqual([
        failed.id,
      ]);
      expect((await ctx.store.listWebhookMessages(project.id, { limit: 100 })).map((m) => m.eventId)).toEqual(
        [failed.id],
      );
      expect(await ctx.store.recordDomainCheck('dom_gone', 'pending', checkWrite(domain, 'verified'))).toBe(
        false,
      );
    });

    it('of concurrent recordDomainCheck calls from one state, exactly one writes', async () => {
      const { project } = await seedProject(ctx.store);
      const domain = makeDomain(project.id, { state: 'verified' });
      await ctx.store.addDomain(domain);
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) => {
          const event = makeEvent(project.id, { type: 'domain.failed' });
          return ctx.store.recordDomainCheck(
            domain.id,
            'verified',
            checkWrite(domain, 'failed', i, { outbox: { events: [event], messages: [] } }),
          );
        }),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await ctx.store.listEvents(project.id, {}, { limit: 100 })).toHaveLength(1);
    });

    it('addDkimKey adds a key in order; CONFLICT for a selector the domain has; false for no domain', async () => {
      const { project } = await seedProject(ctx.store);
      const first = makeDkimKey({ selector: 'zz-first', createdAt: testTime(0) });
      const domain = makeDomain(project.id, { keys: [first] });
      await ctx.store.addDomain(domain);
      const next = makeDkimKey({ selector: 'aa-next', createdAt: testTime(1_000) });
      expect(await ctx.store.addDkimKey(domain.id, next, testTime(1_000))).toBe(true);
      const stored = await ctx.store.getDomain(project.id, domain.domain);
      expect(stored?.keys).toEqual([first, next]);
      expect(stored?.updatedAt).toEqual(testTime(1_000));
      await expectStoreError(
        ctx.store.addDkimKey(domain.id, makeDkimKey({ selector: 'aa-next' }), testTime(2_000)),
        'CONFLICT',
      );
      expect(await ctx.store.addDkimKey('dom_gone', makeDkimKey(), testTime(2_000))).toBe(false);
      expect((await ctx.store.getDomain(project.id, domain.domain))?.keys).toEqual([first, next]);
    });

    it('setDkimKeyState moves a key only from the state given, setting its dates; retired erases the key', async () => {
      const { project } = await seedProject(ctx.store);
      const key = makeDkimKey();
      const domain = makeDomain(project.id, { keys: [key] });
      await ctx.store.addDomain(domain);
      const { selector } = key;
      const move = (
        from: 'pending' | 'active' | 'retiring',
        to: 'active' | 'retiring' | 'retired',
        at: number,
      ) =>
        ctx.store.setDkimKeyState(domain.id, selector, {
          from,
          to,
          now: testTime(at),
          ...(to === 'retiring' ? { retireAt: testTime(at + 7_000) } : {}),
        });
      const stored = async () => (await ctx.store.getDomain(project.id, domain.domain)) as DomainRecord;
      expect(await move('active', 'retiring', 5)).toBe(false);
      expect(
        await ctx.store.setDkimKeyState(domain.id, 'nope', {
          from: 'pending',
          to: 'active',
          now: testTime(5),
        }),
      ).toBe(false);
      expect(await stored()).toEqual(domain);
      expect(await move('pending', 'active', 10)).toBe(true);
      expect((await stored()).keys).toEqual([{ ...key, state: 'active', activatedAt: testTime(10) }]);
      expect((await stored()).updatedAt).toEqual(testTime(10));
      expect(await move('pending', 'active', 11)).toBe(false);
      expect(await move('active', 'retiring', 20)).toBe(true);
      expect((await stored()).keys).toEqual([
        { ...key, state: 'retiring', activatedAt: testTime(10), retireAt: testTime(7_020) },
      ]);
      expect(await move('retiring', 'retired', 30)).toBe(true);
      expect((await stored()).keys).toEqual([
        {
          ...key,
          state: 'retired',
          sealedPrivateKey: null,
          activatedAt: testTime(10),
          retireAt: testTime(7_020),
        },
      ]);
    });

    it('of concurrent setDkimKeyState calls for one key and one state, at most one moves it', async () => {
      const { project } = await seedProject(ctx.store);
      const domain = makeDomain(project.id);
      await ctx.store.addDomain(domain);
      const selector = domain.keys[0]?.selector as string;
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.setDkimKeyState(domain.id, selector, { from: 'pending', to: 'active', now: testTime(i) }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    describe(connect ? 'across processes' : 'across processes (skipped: no `connect` option)', () => {
      const opened: Store[] = [];
      afterEach(async () => {
        await Promise.all(opened.splice(0).map((s) => s.close()));
      });

      it.skipIf(!connect)('claims of domain checks from two instances are disjoint', async () => {
        const other = await (connect as (store: Store) => Promise<Store> | Store)(ctx.store);
        opened.push(other);
        await other.init();
        const { project } = await seedProject(ctx.store);
        const due = Array.from({ length: 20 }, () => makeDomain(project.id));
        for (const d of due) await ctx.store.addDomain(d);
        const stores = [ctx.store, other];
        const claimed = await Promise.all(
          Array.from({ length: ctx.concurrency }, (_, i) =>
            (stores[i % 2] as Store).claimDomainChecks({ now: testTime(0), limit: 4, leaseMs: LEASE }),
          ),
        );
        const ids = claimed.flat().map((d) => d.id);
        expect(new Set(ids).size).toBe(ids.length);
      });
    });
  });
}
