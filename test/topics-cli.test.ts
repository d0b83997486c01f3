/**
 * Issue 38, topics and consent from the CLI: `mailroom topics`, `topic create|update|delete`, `contact
 * topics` and `contact consent`, on the database (`--project`, `--database`) and through a real `mailroom
 * serve` on 127.0.0.1 (`--url`, `--key`): the same answers either way, and the typed client's `topics`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMailroomClient, type MailroomClient } from '@mailroom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProject, startCliProject } from './support/cli-project.js';

describe('topics and consent from the CLI, on the database and through mailroom serve', () => {
  let fixture: CliProject;
  let dir: string;
  let base: string;
  let secret: string;
  let client: MailroomClient;

  const local = (argv: string[]) => fixture.local(argv);
  const remote = (argv: string[]) => fixture.remote(argv);

  beforeAll(async () => {
    fixture = await startCliProject('topics');
    ({ base, secret, dir } = fixture);
    client = createMailroomClient({ url: base, key: secret });
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates topics here and there, lists them the same both ways, sets and shows a contact', async () => {
    const made = await local(['topic', 'create', 'news', '--name', 'Product news', '--default', 'opt-out']);
    expect(made.code, made.err).toBe(0);
    expect(made.out).toContain('Created topic news.');
    const there = await remote(['topic', 'create', 'offers', '--name', 'Offers', '--visibility', 'private']);
    expect(there.code, there.err).toBe(0);
    const here = await local(['topics']);
    expect((await remote(['topics'])).out).toBe(here.out);
    expect(here.out).toContain('news\topt-out\tpublic\tProduct news');
    expect(here.out).toContain('offers\topt-in\tprivate\tOffers');
    const updated = await remote(['topic', 'update', 'offers', '--name', 'Deals', '--json']);
    expect(JSON.parse(updated.out)).toMatchObject({ key: 'offers', name: 'Deals', default: 'opt-in' });
    expect((await local(['topic', 'create', 'news', '--name', 'Again'])).code).not.toBe(0);
    expect((await local(['topic', 'create', 'x', '--name', 'X', '--default', 'maybe'])).code).toBe(2);

    const set = await remote([
      'contact',
      'topics',
      'ann@example.test',
      '--set',
      'news=unsubscribed,offers=subscribed',
    ]);
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain('news\tunsubscribed\tpublic\tProduct news');
    expect(set.out).toContain('offers\tsubscribed\tprivate\tDeals');
    const shown = await local(['contact', 'topics', 'ann@example.test']);
    expect(shown.out).toBe(set.out);
    await local(['contact', 'topics', 'ann@example.test', '--set', 'news=default']);
    expect((await remote(['contact', 'topics', 'ann@example.test'])).out).toContain(
      'news\tsubscribed (default)\tpublic',
    );

    const historyHere = await local(['contact', 'consent', 'ann@example.test', '--json']);
    const historyThere = await remote(['contact', 'consent', 'ann@example.test', '--json']);
    expect(historyThere.out).toBe(historyHere.out);
    const records = (JSON.parse(historyHere.out) as { data: Array<Record<string, unknown>> }).data;
    expect(records.map((r) => [r.topic, r.state, r.source])).toEqual([
      ['news', 'unsubscribed', 'api'],
      ['offers', 'subscribed', 'api'],
      ['news', null, 'api'],
    ]);
    // The remote change came over HTTP: its record has the CLI's address.
    expect(records[0]?.ip).toMatch(/127\.0\.0\.1/);
    expect(records[2]?.ip).toBeNull();

    // The typed client sees the same.
    const { topics } = await client.topics.ofContact('ann@example.test');
    expect(topics.map((t) => [t.key, t.state, t.explicit])).toEqual([
      ['news', 'subscribed', false],
      ['offers', 'subscribed', true],
    ]);
    const deleted = await remote(['topic', 'delete', 'offers']);
    expect(deleted.out).toContain('Deleted topic offers.');
    expect((await client.topics.list()).topics.map((t) => t.key)).toEqual(['news']);
  }, 120_000);

  it('sets the brand here and shows it there; a logo file goes in as a data URI', async () => {
    const logo = join(dir, 'logo.svg');
    writeFileSync(logo, '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
    const set = await local(['brand', '--color', '#0a7f5a', '--logo', logo]);
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain('Brand updated.');
    const shown = await remote(['brand', '--json']);
    expect(shown.code, shown.err).toBe(0);
    const brand = JSON.parse(shown.out) as { name: string; color: string; logo: string };
    expect(brand).toMatchObject({ name: 'Acme', color: '#0a7f5a' });
    expect(Buffer.from(brand.logo.replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toContain(
      '<svg',
    );
    expect((await remote(['brand', '--color', 'red'])).code).not.toBe(0);
    expect((await local(['brand', '--logo', join(dir, 'logo.bmp')])).code).toBe(2);
    const cleared = await remote(['brand', '--logo', 'none']);
    expect(cleared.out).toContain('logo\t(none)');
    expect(cleared.out).toContain('color\t#0a7f5a');
  }, 60_000);
});
