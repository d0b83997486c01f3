/**
 * Receiving domains are shared by the whole server: a project that asks for an address another project
 * already routes is refused without learning which project holds it (the memory store named the owner).
 */
import { createMailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

describe('a route for an address another project holds', () => {
  it('is refused with CONFLICT naming the address, never the other project', async () => {
    const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    try {
      const owner = await mailroom.admin.createProject({ name: 'Owner' });
      const other = await mailroom.admin.createProject({ name: 'Other' });
      const route = { domain: 'in.shared.test', pattern: 'support', destination: { kind: 'store' } } as const;
      await mailroom.receiving.addRoute(owner.secret, route);
      const refused = await mailroom.receiving.addRoute(other.secret, route).then(
        () => undefined,
        (error: unknown) => error as Error & { code?: string },
      );
      expect(refused).toMatchObject({
        code: 'CONFLICT',
        message: 'support@in.shared.test is already routed',
      });
      expect(refused?.message).not.toContain(owner.project.id);
      expect(await mailroom.receiving.listRoutes(other.secret)).toEqual([]);
    } finally {
      await mailroom.close();
    }
  });
});
