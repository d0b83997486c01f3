import type { AccountStore } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';
import { INSERT_KEY, keyParams } from './key-store.js';

/** `AccountStore` on SQL. Projects, secrets, sender identities, templates and the installation's settings. */
export function sqlAccountStore(ctx: SqlContext): AccountStore {
  const { name, dialect, db, runner, codec, guard, all, first, write, upsertAll } = ctx;

  return {
    // Projects and secrets

    createProject(project, secret) {
      return guard('createProject', () =>
        runner.transaction(db, async (tx) => {
          await write(
            'INSERT INTO mailroom_projects (id, name, created_at) VALUES (?, ?, ?)',
            [project.id, project.name, project.createdAt.getTime()],
            tx,
          );
          await write(INSERT_KEY, keyParams(codec, secret), tx);
        }),
      );
    },

    addProjectSecret(secret) {
      return guard('addProjectSecret', async () => {
        await write(INSERT_KEY, keyParams(codec, secret));
      });
    },

    findSecret(hash) {
      return guard('findSecret', async () => {
        const row = await first(
          `SELECT s.*, p.name AS project_name, p.created_at AS project_created_at
           FROM mailroom_project_secrets s JOIN mailroom_projects p ON p.id = s.project_id WHERE s.hash = ?`,
          [hash],
        );
        if (!row) return undefined;
        return {
          secret: codec.secret(row),
          project: codec.project({
            id: row.project_id,
            name: row.project_name,
            created_at: row.project_created_at,
          }),
        };
      });
    },

    getProject(id) {
      return guard('getProject', async () => {
        const row = await first('SELECT * FROM mailroom_projects WHERE id = ?', [id]);
        return row && codec.project(row);
      });
    },

    listProjects() {
      return guard('listProjects', async () =>
        (await all('SELECT * FROM mailroom_projects ORDER BY created_at, id')).map(codec.project),
      );
    },

    // Sender identities

    addSender(sender) {
      return guard(
        'addSender',
        async () => {
          await write(
            'INSERT INTO mailroom_senders (id, project_id, address, name, dkim, created_at) VALUES (?, ?, ?, ?, ?, ?)',
            [
              sender.id,
              sender.projectId,
              sender.address,
              sender.name,
              codec.json(sender.dkim),
              sender.createdAt.getTime(),
            ],
          );
        },
        { exists: { what: `sender ${sender.address}`, projectId: sender.projectId } },
      );
    },

    findSender(projectId, address) {
      return guard('findSender', async () => {
        const row = await first('SELECT * FROM mailroom_senders WHERE project_id = ? AND address = ?', [
          projectId,
          address,
        ]);
        return row && codec.sender(row);
      });
    },

    // Templates

    putTemplate(template) {
      return guard('putTemplate', async () => {
        const columns = [
          'id',
          'project_id',
          'ref',
          'format',
          'subject',
          'source',
          'compiled',
          'version',
          'created_at',
          'updated_at',
        ];
        await write(upsertAll('mailroom_templates', columns, 'project_id, ref'), [
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
        ]);
      });
    },

    getTemplate(projectId, ref) {
      return guard('getTemplate', async () => {
        const row = await first('SELECT * FROM mailroom_templates WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && codec.template(row);
      });
    },

    listTemplates(projectId) {
      return guard('listTemplates', async () =>
        (await all('SELECT * FROM mailroom_templates WHERE project_id = ? ORDER BY ref', [projectId])).map(
          codec.template,
        ),
      );
    },

    // Settings of the installation

    ensureSetting(settingName, value, now) {
      return guard('ensureSetting', async () => {
        const columns = 'name, value, created_at';
        await write(dialect.insertIgnore('mailroom_settings', columns, '(?, ?, ?)', 'name'), [
          settingName,
          value,
          now.getTime(),
        ]);
        // Settings are never deleted: whoever inserted first, this reads the value that stays.
        const row = await first('SELECT value FROM mailroom_settings WHERE name = ?', [settingName]);
        if (typeof row?.value !== 'string') {
          throw new MailroomError('STORE_FAILED', `ensureSetting: ${settingName} was not stored`, {
            source: name,
          });
        }
        return row.value;
      });
    },
  };
}
