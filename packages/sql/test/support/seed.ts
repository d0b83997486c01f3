import type { DeliveryRecord, MailingRecord, Store } from '@mailroom/core';
import {
  makeBatch,
  makeDelivery,
  makeMailing,
  makeProject,
  makeSecret,
  testTime,
} from '@mailroom/core/testing';

/** A project with one `sending` broadcast of `count` deliveries, all due at `testTime(0)`. */
export async function seedDeliveries(
  store: Store,
  count: number,
): Promise<{ mailing: MailingRecord; deliveries: DeliveryRecord[] }> {
  const project = makeProject();
  await store.createProject(project, makeSecret(project.id));
  const mailing = makeMailing(project.id, { status: 'sending' });
  const batch = makeBatch(mailing.id, { recipientCount: count });
  const deliveries = Array.from({ length: count }, (_, i) =>
    makeDelivery(mailing, batch, `r${String(i).padStart(6, '0')}@example.com`, {
      nextAttemptAt: testTime(-i % 1000),
    }),
  );
  await store.commitBatch({
    target: { create: mailing },
    batch,
    deliveries,
    profiles: [],
    profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' },
    sourceJobs: [],
    now: testTime(),
  });
  return { mailing, deliveries };
}
