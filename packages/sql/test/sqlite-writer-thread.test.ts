import { sqlConformance } from './support/conformance.js';

// Every source page, however small, goes to the SQLite background thread: the kit's source tests
// (fence, counts, profile merges, `after`) run on that path as well.
sqlConformance('sqlite', { sqliteWriterThreadRows: 0 });
