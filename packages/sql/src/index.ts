export type {
  SqlDialectOptions,
  SqlKind,
  SqlKyselyOptions,
  SqlStoreOptions,
  SqlUrlOptions,
} from './connection/options.js';
export { migrate } from './migrations/migrate.js';
export {
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  mailroomMigrationProvider,
  mailroomMigrations,
} from './migrations/migrations.js';
export { sqlStore } from './sql-store.js';
