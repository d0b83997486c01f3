import type {
  ReceivedMessageRecord,
  ReceivingDestination,
  ReceivingRouteRecord,
  ReceivingSettingsRecord,
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
  'from_address',
  'expires_at',
] as const;

/** Bytes per row of `mailroom_received_raw`: under MySQL's default packet cap, whatever the message. */
const RAW_PIECE = 1024 * 1024;

/**
 * `ReceivingStore` on SQL (tables of migration `025_receiving`). A received message and its events are
 * one transaction; the unique (domain, pattern) makes one project the owner of an address.
 */
export function sqlReceivingStore(ctx: SqlContext): ReceivingStore {
  const { db, runner, codec, guard, all, first, write, upsertAll } = ctx;

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

    saveReceivedMessage(message, outbox, raw) {
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
              message.fromAddress,
              message.expiresAt?.getTime() ?? null,
            ],
            tx,
          );
          if (raw) {
            const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
            for (let seq = 0, at = 0; seq === 0 || at < bytes.length; seq++, at += RAW_PIECE) {
              await write(
                'INSERT INTO mailroom_received_raw (message_id, seq, bytes) VALUES (?, ?, ?)',
                [message.id, seq, bytes.subarray(at, at + RAW_PIECE)],
                tx,
              );
            }
          }
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

    readReceivedRaw(projectId, id) {
      return guard('readReceivedRaw', async () => {
        const rows = await all(
          `SELECT r.bytes FROM mailroom_received_raw r JOIN mailroom_received_messages m ON m.id = r.message_id
           WHERE m.project_id = ? AND r.message_id = ? ORDER BY r.seq`,
          [projectId, id],
        );
        if (rows.length === 0) return undefined;
        return new Uint8Array(Buffer.concat(rows.map((row) => toBuffer(row.bytes))));
      });
    },

    pruneReceivedMessages(now, limit) {
      return guard('pruneReceivedMessages', () =>
        runner.transaction(db, async (tx) => {
          const ids = (
            await all(
              'SELECT id FROM mailroom_received_messages WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
              [now.getTime(), limit],
              tx,
            )
          ).map((row) => String(row.id));
          if (ids.length === 0) return 0;
          const list = runner.values(1, ids.length);
          await write(`DELETE FROM mailroom_received_raw WHERE message_id IN ${list}`, ids, tx);
          return write(`DELETE FROM mailroom_received_messages WHERE id IN ${list}`, ids, tx);
        }),
      );
    },

    getReceivingSettings(projectId) {
      return guard('getReceivingSettings', async () => {
        const row = await first('SELECT * FROM mailroom_receiving_settings WHERE project_id = ?', [
          projectId,
        ]);
        return row ? decodeSettings(row) : undefined;
      });
    },

    putReceivingSettings(settings) {
      return guard('putReceivingSettings', async () => {
        await write(upsertAll('mailroom_receiving_settings', SETTINGS_COLUMNS, 'project_id'), [
          settings.projectId,
          settings.retentionDays,
          settings.maxMessageBytes,
          settings.replyDomain,
          settings.updatedAt.getTime(),
        ]);
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

const SETTINGS_COLUMNS = [
  'project_id',
  'retention_days',
  'max_message_bytes',
  'reply_domain',
  'updated_at',
] as const;

function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('mailroom_received_raw.bytes: not bytes');
}

const orNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

function decodeSettings(row: Row): ReceivingSettingsRecord {
  return {
    projectId: String(row.project_id),
    retentionDays: orNull(row.retention_days),
    maxMessageBytes: orNull(row.max_message_bytes),
    replyDomain:
      row.reply_domain === null || row.reply_domain === undefined ? null : String(row.reply_domain),
    updatedAt: new Date(Number(row.updated_at)),
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
    fromAddress: String(row.from_address ?? ''),
    expiresAt: orNull(row.expires_at) === null ? null : new Date(Number(row.expires_at)),
  };
}
