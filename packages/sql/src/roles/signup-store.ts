import type { ConsentTextVersion, FormRecord, SignupRecord, SignupStore } from '@mailroom/core';
import type { Codec, Row } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';

const FORM_COLUMNS = [
  'ref',
  'project_id',
  'name',
  'group_ref',
  'topic_key',
  'allowed_origins',
  'consent_texts',
  'sender',
  'confirm_template_ref',
  'created_at',
  'updated_at',
] as const;

const SIGNUP_COLUMNS = [
  'id',
  'project_id',
  'form_ref',
  'address',
  'consent_version',
  'status',
  'created_at',
  'sent_at',
  'confirmed_at',
] as const;

/**
 * `SignupStore` on SQL (tables of migration `023_signup_forms`). The send claim is one conditional UPDATE
 * (at most one winner per interval, whatever the number of processes); a confirmation is one transaction
 * (the signup's status and the group membership, insert-or-ignore).
 */
export function sqlSignupStore(ctx: SqlContext): SignupStore {
  const { db, runner, codec, guard, all, first, write, dialect } = ctx;

  const getSignup = async (id: string) => {
    const row = await first('SELECT * FROM mailroom_signups WHERE id = ?', [id]);
    return row ? decodeSignup(row) : undefined;
  };

  return {
    createForm(form) {
      return guard(
        'createForm',
        async () => {
          await write(
            `INSERT INTO mailroom_signup_forms (${FORM_COLUMNS.join(', ')}) VALUES ${runner.values(1, FORM_COLUMNS.length)}`,
            formParams(codec, form),
          );
        },
        { exists: { what: `form ${form.ref}`, projectId: form.projectId } },
      );
    },

    findForm(ref) {
      return guard('findForm', async () => {
        const row = await first('SELECT * FROM mailroom_signup_forms WHERE ref = ?', [ref]);
        return row ? decodeForm(codec, row) : undefined;
      });
    },

    listForms(projectId) {
      return guard('listForms', async () =>
        (await all('SELECT * FROM mailroom_signup_forms WHERE project_id = ? ORDER BY ref', [projectId])).map(
          (row) => decodeForm(codec, row),
        ),
      );
    },

    replaceForm(form) {
      return guard('replaceForm', async () => {
        const [, ...params] = formParams(codec, form);
        const sets = FORM_COLUMNS.slice(1)
          .map((c) => `${c} = ?`)
          .join(', ');
        const changed = await write(
          `UPDATE mailroom_signup_forms SET ${sets} WHERE ref = ? AND project_id = ?`,
          [...params, form.ref, form.projectId],
        );
        return changed > 0;
      });
    },

    deleteForm(projectId, ref) {
      return guard(
        'deleteForm',
        async () =>
          (await write('DELETE FROM mailroom_signup_forms WHERE ref = ? AND project_id = ?', [
            ref,
            projectId,
          ])) > 0,
      );
    },

    openSignup(signup) {
      return guard('openSignup', async () => {
        await write(
          dialect.insertIgnore(
            'mailroom_signups',
            SIGNUP_COLUMNS.join(', '),
            runner.values(1, SIGNUP_COLUMNS.length),
            'project_id, form_ref, address',
          ),
          signupParams(signup),
        );
        const row = await first(
          'SELECT * FROM mailroom_signups WHERE project_id = ? AND form_ref = ? AND address = ?',
          [signup.projectId, signup.formRef, signup.address],
        );
        return row ? decodeSignup(row) : signup;
      });
    },

    getSignup(id) {
      return guard('getSignup', () => getSignup(id));
    },

    claimSignupSend(id, now, notAfter) {
      return guard(
        'claimSignupSend',
        async () =>
          (await write(
            'UPDATE mailroom_signups SET sent_at = ? WHERE id = ? AND (sent_at IS NULL OR sent_at <= ?)',
            [now.getTime(), id, notAfter.getTime()],
          )) > 0,
      );
    },

    confirmSignup(id, now, groupId) {
      return guard('confirmSignup', () =>
        runner.transaction(db, async (tx) => {
          const row = await first(`SELECT * FROM mailroom_signups WHERE id = ?${runner.forUpdate}`, [id], tx);
          if (!row) return false;
          const signup = decodeSignup(row);
          if (groupId !== null) {
            await write(
              dialect.insertIgnore(
                'mailroom_group_members',
                'group_id, address, project_id, created_at',
                runner.values(1, 4),
                'group_id, address',
              ),
              [groupId, signup.address, signup.projectId, now.getTime()],
              tx,
            );
          }
          if (signup.status !== 'pending') return false;
          await write(
            "UPDATE mailroom_signups SET status = 'confirmed', confirmed_at = ? WHERE id = ? AND status = 'pending'",
            [now.getTime(), id],
            tx,
          );
          return true;
        }),
      );
    },
  };
}

function formParams(codec: Codec, f: FormRecord): unknown[] {
  return [
    f.ref,
    f.projectId,
    f.name,
    f.groupRef,
    f.topicKey,
    codec.json(f.allowedOrigins),
    codec.json(f.consentTexts.map((t) => ({ ...t, createdAt: t.createdAt.getTime() }))),
    f.sender,
    f.confirmTemplateRef,
    f.createdAt.getTime(),
    f.updatedAt.getTime(),
  ];
}

function signupParams(s: SignupRecord): unknown[] {
  return [
    s.id,
    s.projectId,
    s.formRef,
    s.address,
    s.consentVersion,
    s.status,
    s.createdAt.getTime(),
    s.sentAt?.getTime() ?? null,
    s.confirmedAt?.getTime() ?? null,
  ];
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(Number(v)));

function decodeForm(codec: Codec, row: Row): FormRecord {
  const texts = codec.fromJson<Array<Omit<ConsentTextVersion, 'createdAt'> & { createdAt: number }>>(
    row.consent_texts,
  );
  return {
    ref: String(row.ref),
    projectId: String(row.project_id),
    name: String(row.name),
    groupRef: text(row.group_ref),
    topicKey: text(row.topic_key),
    allowedOrigins: codec.fromJson<string[]>(row.allowed_origins) ?? [],
    consentTexts: (texts ?? []).map((t) => ({ ...t, createdAt: new Date(t.createdAt) })),
    sender: String(row.sender),
    confirmTemplateRef: text(row.confirm_template_ref),
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function decodeSignup(row: Row): SignupRecord {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    formRef: String(row.form_ref),
    address: String(row.address),
    consentVersion: Number(row.consent_version),
    status: String(row.status) as SignupRecord['status'],
    createdAt: new Date(Number(row.created_at)),
    sentAt: date(row.sent_at),
    confirmedAt: date(row.confirmed_at),
  };
}
