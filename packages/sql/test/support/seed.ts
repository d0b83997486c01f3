import type { BatchRecord, DeliveryRecord, MailingRecord, Store } from '@mailroom/core';
import {
  makeBatch,
  makeDelivery,
  makeMailing,
  makeProject,
  makeSecret,
  testTime,
} from '@mailroom/core/testing';

/** A project with one `sending` broadcast whose deliveries `build` makes, committed as one batch. */
export async function seedMailing(
  store: Store,
  build: (mailing: MailingRecord, batch: BatchRecord) => DeliveryRecord[],
): Promise<{ mailing: MailingRecord; deliveries: DeliveryRecord[] }> {
  const project = makeProject();
  await store.createProject(project, makeSecret(project.id));
  const mailing = makeMailing(project.id, { status: 'sending' });
  const draft = makeBatch(mailing.id);
  const deliveries = build(mailing, draft);
  await store.commitBatch({
    target: { create: mailing },
    batch: { ...draft, recipientCount: deliveries.length },
    deliveries,
    profiles: [],
    profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' },
    sourceJobs: [],
    now: testTime(),
  });
  return { mailing, deliveries };
}

/** A project with one `sending` broadcast of `count` deliveries, all due at `testTime(0)`. */
export function seedDeliveries(
  store: Store,
  count: number,
): Promise<{ mailing: MailingRecord; deliveries: DeliveryRecord[] }> {
  return seedMailing(store, (mailing, batch) =>
    Array.from({ length: count }, (_, i) =>
      makeDelivery(mailing, batch, `r${String(i).padStart(6, '0')}@example.com`, {
        nextAttemptAt: testTime(-i % 1000),
      }),
    ),
  );
}
