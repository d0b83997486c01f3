import type { EventRecord } from '@mailroom/core';
import type { Codec } from './codec.js';

/** Columns of `mailroom_events`, in parameter order. */
export const EVENT_COLUMNS = [
  'id',
  'project_id',
  'type',
  'mailing_ref',
  'delivery_id',
  'address',
  'data',
  'created_at',
] as const;

/** An event as the values of {@link EVENT_COLUMNS}. */
export function eventParams(codec: Codec, e: EventRecord): unknown[] {
  return [
    e.id,
    e.projectId,
    e.type,
    e.mailingRef,
    e.deliveryId,
    e.address,
    codec.json(e.data),
    e.createdAt.getTime(),
  ];
}
