import type { DkimKeyRecord, DomainFinding, DomainRecord, DomainStore } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { Codec, Row } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
import { IN_LIST_SIZE, type SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

/** Columns of `mailroom_domains`, in parameter order. */
const DOMAIN_COLUMNS = [
  'id',
  'project_id',
  'domain',
  'state',
  'return_path',
  'return_path_mx',
  'dmarc_reports',
  'findings',
  'checked_at',
  'next_check_at',
  'created_at',
  'updated_at',
] as const;

/** Columns of `mailroom_dkim_keys`, in parameter order. */
const KEY_COLUMNS = [
  'domain_id',
  'selector',
  'algorithm',
  'public_key',
  'sealed_private_key',
  'state',
  'created_at',
  'activated_at',
  'retire_at',
] as const;

/** A domain row without its keys. */
type DomainRow = Omit<DomainRecord, 'keys'>;

/**
 * `DomainStore` on SQL (tables of migration `007_domains`): one row per domain, one per key. Every write
 * that must see a state and change it is one conditional `UPDATE` (the compare-and-sets) or one
 * transaction.
 */
export function sqlDomainStore(ctx: SqlContext): DomainStore {
  const { db, runner, codec, claims, guard, all, first, write } = ctx;

  /** The keys of `rows`, attached to them (oldest first, then by selector). */
  async function withKeys(rows: DomainRow[], on: Db = db): Promise<DomainRecord[]> {
    const keys = new Map<string, DkimKeyRecord[]>(rows.map((row) => [row.id, []]));
    const ids = [...keys.keys()];
    for (let i = 0; i < ids.length; i += IN_LIST_SIZE) {
      const chunk = ids.slice(i, i + IN_LIST_SIZE);
      const found = await all(
        `SELECT * FROM mailroom_dkim_keys WHERE domain_id IN ${runner.values(1, chunk.length)} ORDER BY created_at, selector`,
        chunk,
        on,
      );
      for (const row of found) keys.get(String(row.domain_id))?.push(decodeKey(row));
    }
    return rows.map((row) => ({ ...row, keys: keys.get(row.id) ?? [] }));
  }

  const insertKeys = (tx: Db, domainId: string, list: readonly DkimKeyRecord[]) =>
    list.length === 0
      ? Promise.resolve(0)
      : write(
          `INSERT INTO mailroom_dkim_keys (${KEY_COLUMNS.join(', ')}) VALUES ${runner.values(list.length, KEY_COLUMNS.length)}`,
          list.flatMap((key) => keyParams(domainId, key)),
          tx,
        );

  return {
    addDomain(domain) {
      return guard('addDomain', () =>
        runner.transaction(db, async (tx) => {
          await write(
            `INSERT INTO mailroom_domains (${DOMAIN_COLUMNS.join(', ')}) VALUES ${runner.values(1, DOMAIN_COLUMNS.length)}`,
            domainParams(codec, domain),
            tx,
          );
          await insertKeys(tx, domain.id, domain.keys);
        }),
      );
    },

    getDomain(projectId, domain) {
      return guard('getDomain', async () => {
        const row = await first('SELECT * FROM mailroom_domains WHERE project_id = ? AND domain = ?', [
          projectId,
          domain,
        ]);
        if (!row) return undefined;
        return (await withKeys([decodeDomain(codec, row)]))[0];
      });
    },

    listDomains(projectId) {
      return guard('listDomains', async () => {
        const rows = await all('SELECT * FROM mailroom_domains WHERE project_id = ? ORDER BY domain', [
          projectId,
        ]);
        return withKeys(rows.map((row) => decodeDomain(codec, row)));
      });
    },

    removeDomain(projectId, domain) {
      return guard('removeDomain', () =>
        runner.transaction(db, async (tx) => {
          const row = await first(
            `SELECT id FROM mailroom_domains WHERE project_id = ? AND domain = ?${runner.forUpdate}`,
            [projectId, domain],
            tx,
          );
          if (!row) return false;
          await write('DELETE FROM mailroom_dkim_keys WHERE domain_id = ?', [row.id], tx);
          await write('DELETE FROM mailroom_domains WHERE id = ?', [row.id], tx);
          return true;
        }),
      );
    },

    claimDomainChecks({ now, limit, leaseMs }) {
      return guard('claimDomainChecks', async () => {
        const t = now.getTime();
        const claimed = await claims.claim(db, {
          table: 'mailroom_domains',
          due: 'd.next_check_at <= ? ORDER BY d.next_check_at, d.id',
          dueParams: [t],
          limit,
          mysqlIndex: 'mailroom_domains_due',
          set: 'next_check_at = ?, updated_at = ?',
          setParams: [t + leaseMs, t],
          columns: DOMAIN_COLUMNS,
          decode: (row) => decodeDomain(codec, row),
        });
        return withKeys(claimed);
      });
    },

    recordDomainCheck(domainId, from, check) {
      return guard('recordDomainCheck', async () => {
        const text =
          'UPDATE mailroom_domains SET state = ?, findings = ?, checked_at = ?, next_check_at = ?, updated_at = ? WHERE id = ? AND state = ?';
        const params = [
          check.state,
          codec.json(check.findings),
          check.checkedAt.getTime(),
          check.nextCheckAt.getTime(),
          check.checkedAt.getTime(),
          domainId,
          from,
        ];
        const outbox = check.outbox;
        if (!outbox) return (await write(text, params)) > 0;
        return runner.transaction(db, async (tx) => {
          if ((await write(text, params, tx)) === 0) return false;
          await writeOutbox(runner, codec, tx, [outbox]);
          return true;
        });
      });
    },

    addDkimKey(domainId, key, now) {
      return guard('addDkimKey', () =>
        runner.transaction(db, async (tx) => {
          const row = await first(
            `SELECT id FROM mailroom_domains WHERE id = ?${runner.forUpdate}`,
            [domainId],
            tx,
          );
          if (!row) return false;
          await insertKeys(tx, domainId, [key]);
          await write(
            'UPDATE mailroom_domains SET updated_at = ? WHERE id = ?',
            [now.getTime(), domainId],
            tx,
          );
          return true;
        }),
      );
    },

    setDkimKeyState(domainId, selector, transition) {
      return guard('setDkimKeyState', () =>
        runner.transaction(db, async (tx) => {
          const sets = ['state = ?'];
          const params: unknown[] = [transition.to];
          if (transition.to === 'active') {
            sets.push('activated_at = ?');
            params.push(transition.now.getTime());
          }
          if (transition.to === 'retiring') {
            sets.push('retire_at = ?');
            params.push(ms(transition.retireAt));
          }
          if (transition.to === 'retired') sets.push('sealed_private_key = NULL');
          const changed = await write(
            `UPDATE mailroom_dkim_keys SET ${sets.join(', ')} WHERE domain_id = ? AND selector = ? AND state = ?`,
            [...params, domainId, selector, transition.from],
            tx,
          );
          if (changed === 0) return false;
          await write(
            'UPDATE mailroom_domains SET updated_at = ? WHERE id = ?',
            [transition.now.getTime(), domainId],
            tx,
          );
          return true;
        }),
      );
    },
  };
}

function domainParams(codec: Codec, d: DomainRecord): unknown[] {
  return [
    d.id,
    d.projectId,
    d.domain,
    d.state,
    d.returnPath,
    d.returnPathMx,
    d.dmarcReports,
    codec.json(d.findings),
    ms(d.checkedAt),
    d.nextCheckAt.getTime(),
    d.createdAt.getTime(),
    d.updatedAt.getTime(),
  ];
}

function keyParams(domainId: string, k: DkimKeyRecord): unknown[] {
  return [
    domainId,
    k.selector,
    k.algorithm,
    k.publicKey,
    k.sealedPrivateKey,
    k.state,
    k.createdAt.getTime(),
    ms(k.activatedAt),
    ms(k.retireAt),
  ];
}

function decodeDomain(codec: Codec, row: Row): DomainRow {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    domain: String(row.domain),
    state: String(row.state) as DomainRecord['state'],
    returnPath: stringOrNull(row.return_path),
    returnPathMx: stringOrNull(row.return_path_mx),
    dmarcReports: stringOrNull(row.dmarc_reports),
    findings: codec.fromJson<DomainFinding[] | null>(row.findings),
    checkedAt: dateOrNull(row.checked_at),
    nextCheckAt: new Date(Number(row.next_check_at)),
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function decodeKey(row: Row): DkimKeyRecord {
  return {
    selector: String(row.selector),
    algorithm: String(row.algorithm) as DkimKeyRecord['algorithm'],
    publicKey: String(row.public_key),
    sealedPrivateKey: stringOrNull(row.sealed_private_key),
    state: String(row.state) as DkimKeyRecord['state'],
    createdAt: new Date(Number(row.created_at)),
    activatedAt: dateOrNull(row.activated_at),
    retireAt: dateOrNull(row.retire_at),
  };
}

function stringOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value));
}
