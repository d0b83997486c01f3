import type {
  ReceivedMessageRecord,
  ReceivingDestination,
  ReceivingRouteRecord,
  ReceivingStore,
} from '@mailroom/core';
import type { Codec, Row } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

const ROUTE_COLUMNS = ['id', 'project_id', 'domain', 'pattern', 'destination', 'created_at'] as const;
const MESSAGE_COLUMNS = [
  'id',
  'project_id',
  'route_id',
  'envelope_from',
  'envelope_to',
  'remote_address',
  'message',
  'created_at',
] as const;

/**
 * `ReceivingStore` on SQL (tables of migration `025_receiving`). A received message and its events are
 * one transaction; the unique (domain, pattern) makes one project the owner of an address.
 */
export function sqlReceivingStore(ctx: SqlContext): ReceivingStore {
  const { db, runner, codec, guard, all, first, write } = ctx;

  return {
    createReceivingRoute(route) {
      return guard(
        'createReceivingRoute',
        async () => {
          await write(
            `INSERT INTO mailroom_receiving_routes (${ROUTE_COLUMNS.join(', ')}) VALUES ${runner.values(1, ROUTE_COLUMNS.length)}`,
            [
              route.id,
              route.projectId,
              route.domain,
              route.pattern,
              codec.json(route.destination),
              route.createdAt.getTime(),
            ],
          );
        },
        { exists: { what: `route ${route.pattern}@${route.domain}`, projectId: route.projectId } },
      );
    },

    listReceivingRoutes(projectId) {
      return guard('listReceivingRoutes', async () =>
        (
          await all('SELECT * FROM mailroom_receiving_routes WHERE project_id = ? ORDER BY domain, pattern', [
            projectId,
          ])
        ).map((row) => decodeRoute(codec, row)),
      );
    },

    findReceivingRoutes(domain) {
      return guard('findReceivingRoutes', async () =>
        (
          await all('SELECT * FROM mailroom_receiving_routes WHERE domain = ? ORDER BY pattern', [domain])
        ).map((row) => decodeRoute(codec, row)),
      );
    },

    deleteReceivingRoute(projectId, id) {
      return guard(
        'deleteReceivingRoute',
        async () =>
          (await write('DELETE FROM mailroom_receiving_routes WHERE project_id = ? AND id = ?', [
            projectId,
            id,
          ])) > 0,
      );
    },

    saveReceivedMessage(message, outbox) {
      return guard('saveReceivedMessage', () =>
        runner.transaction(db, async (tx) => {
          await write(
            `INSERT INTO mailroom_received_messages (${MESSAGE_COLUMNS.join(', ')}) VALUES ${runner.values(1, MESSAGE_COLUMNS.length)}`,
            [
              message.id,
              message.projectId,
              message.routeId,
              message.envelopeFrom,
              codec.json(message.envelopeTo),
              message.remoteAddress,
              codec.json(message.message),
              message.createdAt.getTime(),
            ],
            tx,
          );
          if (outbox) await writeOutbox(runner, codec, tx, [outbox]);
        }),
      );
    },

    getReceivedMessage(projectId, id) {
      return guard('getReceivedMessage', async () => {
        const row = await first('SELECT * FROM mailroom_received_messages WHERE project_id = ? AND id = ?', [
          projectId,
          id,
        ]);
        return row ? decodeMessage(codec, row) : undefined;
      });
    },

    listReceivedMessages(projectId, page) {
      return guard('listReceivedMessages', async () => {
        const rows = page.before
          ? await all(
              'SELECT * FROM mailroom_received_messages WHERE project_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
              [projectId, page.before, page.limit],
            )
          : await all(
              'SELECT * FROM mailroom_received_messages WHERE project_id = ? ORDER BY id DESC LIMIT ?',
              [projectId, page.limit],
            );
        return rows.map((row) => decodeMessage(codec, row));
      });
    },
  };
}

function decodeRoute(codec: Codec, row: Row): ReceivingRouteRecord {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    domain: String(row.domain),
    pattern: String(row.pattern),
    destination: codec.fromJson<ReceivingDestination>(row.destination),
    createdAt: new Date(Number(row.created_at)),
  };
}

function decodeMessage(codec: Codec, row: Row): ReceivedMessageRecord {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    routeId: String(row.route_id),
    envelopeFrom: String(row.envelope_from),
    envelopeTo: codec.fromJson<string[]>(row.envelope_to),
    remoteAddress: String(row.remote_address),
    message: codec.fromJson<Record<string, unknown>>(row.message),
    createdAt: new Date(Number(row.created_at)),
  };
}
