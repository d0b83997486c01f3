/**
 * The audience of `topic-broadcast`, written straight into a SQLite file (set-up, not measured): `contacts`
 * profiles in group `all`, every other one subscribed to the opt-in topic `news` and a member of group
 * `half`, so that a broadcast to `all` on topic `news` and one to `half` reach the same recipients.
 */
import Database from 'better-sqlite3';

/** The address of contact `i` of the seeded audience. */
export function seededAddress(i: number): string {
  return `r${String(i).padStart(6, '0')}@example.test`;
}

/** Writes the profiles, memberships and topic states (see the file's comment) in one transaction. */
export function seedTopicAudience(
  file: string,
  projectId: string,
  groups: { all: string; half: string },
  contacts: number,
): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const now = Date.now();
  const profile = db.prepare(
    `INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'subscribed', '[]', ?, ?)`,
  );
  const member = db.prepare(
    'INSERT INTO mailroom_group_members (group_id, address, project_id, created_at) VALUES (?, ?, ?, ?)',
  );
  const state = db.prepare(
    `INSERT INTO mailroom_topic_states (project_id, address, topic_key, state, updated_at)
     VALUES (?, ?, 'news', 'subscribed', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < contacts; i++) {
      const address = seededAddress(i);
      profile.run(
        projectId,
        address,
        `Reader${i} Example`,
        JSON.stringify({ plan: i % 3 ? 'free' : 'pro' }),
        now,
        now,
      );
      member.run(groups.all, address, projectId, now);
      if (i % 2 === 0) {
        member.run(groups.half, address, projectId, now);
        state.run(projectId, address, now);
      }
    }
  })();
  db.close();
}
