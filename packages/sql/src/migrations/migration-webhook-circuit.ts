import type { Kysely, Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/column-types.js';

/**
 * 008: webhook endpoints get a circuit (`WebhookEndpointRecord.circuitOpenUntil`, epoch milliseconds,
 * null while closed). Endpoints written before have it closed.
 */
export function webhookCircuit(t: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('mailroom_webhook_endpoints')
        .addColumn('circuit_open_until', t.big)
        .execute();
    },
  };
}
