export { migrate } from './migrate.js';
export {
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  mailroomMigrationProvider,
  mailroomMigrations,
} from './migrations.js';
export type {
  SqlDialectOptions,
  SqlKind,
  SqlKyselyOptions,
  SqlStoreOptions,
  SqlUrlOptions,
} from './options.js';
export { sqlStore } from './sql-store.js';
