import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';

/** A store the cross-package tests run against, with how to make a fresh one. */
export interface StoreCase {
  name: string;
  make: () => Promise<Store>;
}

/**
 * The stores every end-to-end test runs on: memory and SQLite always; PostgreSQL and MariaDB when their
 * URL is set (always in CI: `.ci/run` sets both). Each call gets an empty database of its own.
 */
export function storeCases(): StoreCase[] {
  const cases: StoreCase[] = [
    { name: 'memory', make: async () => memoryStore() },
    {
      name: 'sqlite',
      make: async () => sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-e2e-')), 'mailroom.db') }),
    },
  ];
  return cases;
}
