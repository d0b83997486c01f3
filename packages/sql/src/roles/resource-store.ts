import type { ResourceStore } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/**
 * `ResourceStore` on SQL: pages and removals of senders, templates and suppressions. The template
 * compare-and-set is one statement (an insert that skips an existing ref, or an update conditioned on the
 * version), so the database's row lock decides between racing writers.
 */
export function sqlResourceStore(ctx: SqlContext): ResourceStore {
  const { dialect, codec, guard, all, write, pageAfter } = ctx;
  // Byte-exact substring tests (LIKE is case-insensitive on SQLite and needs escaping everywhere).
  const contains = dialect.contains('address');

  return {
    listSenders(projectId, page) {
      return guard('listSenders', async () => {
        const [after, params] = pageAfter(page.after, 'address');
        const rows = await all(
          `SELECT * FROM mailroom_senders WHERE project_id = ?${after} ORDER BY address LIMIT ?`,
          [projectId, ...params, page.limit],
        );
        return rows.map(codec.sender);
      });
    },

    removeSender(projectId, address) {
      return guard('removeSender', async () => {
        const removed = await write('DELETE FROM mailroom_senders WHERE project_id = ? AND address = ?', [
          projectId,
          address,
        ]);
        return removed > 0;
      });
    },

    listTemplatePage(projectId, page) {
      return guard('listTemplatePage', async () => {
        const [after, params] = pageAfter(page.after, 'ref');
        const rows = await all(
          `SELECT * FROM mailroom_templates WHERE project_id = ?${after} ORDER BY ref LIMIT ?`,
          [projectId, ...params, page.limit],
        );
        return rows.map(codec.template);
      });
    },

    writeTemplateVersion(template, expectedVersion) {
      return guard('writeTemplateVersion', async () => {
        if (expectedVersion === null) {
          const columns =
            'id, project_id, ref, format, subject, source, compiled, version, created_at, updated_at';
          const values = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
          const inserted = await write(
            dialect.insertIgnore('mailroom_templates', columns, values, 'project_id, ref'),
            [
              template.id,
              template.projectId,
              template.ref,
              template.format,
              template.subject,
              template.source,
              template.compiled,
              template.version,
              template.createdAt.getTime(),
              template.updatedAt.getTime(),
            ],
          );
          return inserted > 0;
        }
        // The row keeps its id and creation time: a version replaces the content, not the template.
        const updated = await write(
          `UPDATE mailroom_templates SET format = ?, subject = ?, source = ?, compiled = ?, version = ?, updated_at = ?
           WHERE project_id = ? AND ref = ? AND version = ?`,
          [
            template.format,
            template.subject,
            template.source,
            template.compiled,
            template.version,
            template.updatedAt.getTime(),
            template.projectId,
            template.ref,
            expectedVersion,
          ],
        );
        return updated > 0;
      });
    },

    removeTemplate(projectId, ref) {
      return guard('removeTemplate', async () => {
        const removed = await write('DELETE FROM mailroom_templates WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return removed > 0;
      });
    },

    listSuppressions(projectId, page) {
      return guard('listSuppressions', async () => {
        const [after, params] = pageAfter(page.after, 'address');
        const text = page.contains ?? '';
        const [filter, filterParams] = text === '' ? ['', []] : [` AND ${contains}`, [text]];
        const rows = await all(
          `SELECT * FROM mailroom_suppressions WHERE project_id = ?${after}${filter} ORDER BY address LIMIT ?`,
          [projectId, ...params, ...filterParams, page.limit],
        );
        return rows.map(codec.suppression);
      });
    },
  };
}
