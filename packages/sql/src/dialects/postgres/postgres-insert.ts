import type { InsertOptions, InsertTarget } from '../../writes/insert-target.js';

/**
 * PostgreSQL: one `INSERT ... SELECT ... FROM unnest(...)` for all `rows`, with `?` placeholders (one
 * array per column), optionally only `where` a condition holds (`where` refers to no parameter), and
 * with `onConflict: 'fail'` a key that exists is an error instead of a skipped row.
 */
export function pgInsert(
  target: InsertTarget,
  rows: unknown[][],
  options: InsertOptions & { where?: string; onConflict?: 'fail' } = {},
): { text: string; params: unknown[] } {
  const { table, columns, pgTypes, key } = target;
  const { update, returning, where } = options;
  const list = columns.join(', ');
  // A column with one value in every row (the mailing, the batch, the times, the nulls of a new row)
  // travels once as a scalar instead of as an array of copies: less to encode, send and unnest.
  const scalars: unknown[] = [];
  const arrays: unknown[][] = [];
  const select: string[] = [];
  const unnested: string[] = [];
  const names: string[] = [];
  for (let j = 0; j < columns.length; j++) {
    const column = columns[j] as string;
    const type = pgTypes[j] as string;
    const first = rows[0]?.[j];
    // The first column always unnests: it gives the statement its rows.
    let same = j > 0 && rows.length > 1;
    for (let i = 1; same && i < rows.length; i++) same = (rows[i] as unknown[])[j] === first;
    if (same) {
      select.push(`?::${type}`);
      scalars.push(first);
    } else {
      select.push(type === 'jsonb' ? `u.${column}::jsonb` : `u.${column}`);
      unnested.push(`?::${type === 'jsonb' ? 'text' : type}[]`);
      names.push(column);
      arrays.push(rows.map((row) => row[j]));
    }
  }
  const onConflict = update
    ? `DO UPDATE SET ${update.map((column) => `${column} = excluded.${column}`).join(', ')}`
    : 'DO NOTHING';
  const conflict = options.onConflict === 'fail' ? '' : ` ON CONFLICT (${key}) ${onConflict}`;
  const from = unnested.length > 0 ? ` FROM unnest(${unnested.join(', ')}) AS u(${names.join(', ')})` : '';
  const text = `INSERT INTO ${table} (${list}) SELECT ${select.join(', ')}${from}${where ? ` WHERE ${where}` : ''}${conflict}${returning ? ` RETURNING ${returning}` : ''}`;
  return { text, params: [...scalars, ...arrays] };
}
