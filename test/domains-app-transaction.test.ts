import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import { type AppDatabase, type AppKind, openAppDatabase } from './support/app-database.js';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';

/**
 * The sending policy inside the app's own transaction: the sender's domain is read through that
 * transaction (on SQLite, a read past it would wait for the very connection the transaction holds), so
 * `enforce` refuses an unverified domain at once and lets a verified one through, and a refusal leaves the
 * app's transaction usable.
 */
for (const kind of ['sqlite', 'postgres'] as AppKind[]) {
  describe(`the sending policy inside the app's transaction on ${kind}`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    let app: AppDatabase;
    let dns: DnsZoneServer;
    let mailroom: Mailroom;
    let secret: string;
    const body = {
      subject: 'Receipt',
      sender: 'shop@acme.example',
      message: 'Thanks',
      recipients: 'c@example.org',
    };

    beforeAll(async () => {
      app = await openAppDatabase(kind, await databases.create());
      dns = await startDnsZone({});
      mailroom = createMailroom({
        store: app.store,
        transport: memoryTransport(),
        domains: { sending: 'enforce', resolver: dns.resolver(), checkEveryMs: 0 },
      });
      const created = await mailroom.admin.createProject({ name: 'Shop' });
      secret = created.secret;
      await mailroom.admin.addSender(created.project.id, { address: 'shop@acme.example' });
    });
    afterAll(async () => {
      await mailroom?.close();
      await app?.db.destroy();
      await dns?.close();
    });

    /** An order and its receipt in one app transaction; answers the send's outcome, the order committed either way. */
    async function order(id: string): Promise<{ ref?: string; code?: string; message?: string }> {
      return app.db.transaction().execute(async (tx) => {
        await tx.insertInto('app_orders').values({ id, customer: 'c@example.org' }).execute();
        try {
          return { ref: (await mailroom.send(secret, body, { transaction: tx })).ref };
        } catch (error) {
          return error as { code: string; message: string };
        }
      });
    }

    it('refuses an unverified domain naming why, then accepts it once verified', async () => {
      const refused = await order('o-1');
      expect(refused).toMatchObject({
        code: 'DOMAIN_NOT_VERIFIED',
        message: expect.stringMatching(/acme\.example is not a domain of this project/),
      });
      const added = await mailroom.addDomain(secret, 'acme.example');
      dns.zone = publish({}, added.records);
      expect((await mailroom.verifyDomain(secret, 'acme.example')).state).toBe('verified');
      const accepted = await order('o-2');
      expect(accepted.ref).toMatch(/^msg_/);
      expect(await app.orders()).toEqual(['o-1', 'o-2']);
    });
  });
}
