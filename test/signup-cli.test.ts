import { createMailroomClient, type MailroomClient } from '@mailroom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProject, startCliProject } from './support/cli-project.js';

describe('signup forms from the CLI, on the database and through mailroom serve', () => {
  let fixture: CliProject;
  let sink: CliProject['sink'];
  let base: string;
  let secret: string;
  let client: MailroomClient;

  const local = (argv: string[]) => fixture.local(argv);
  const remote = (argv: string[]) => fixture.remote(argv);

  beforeAll(async () => {
    fixture = await startCliProject('signup');
    ({ base, secret, sink } = fixture);
    client = createMailroomClient({ url: base, key: secret });
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates forms here and there, lists them the same both ways, versions the text, deletes', async () => {
    const sender = await local(['sender', 'add', 'news@acme.test']);
    expect(sender.code, sender.err).toBe(0);
    const topic = await local(['topic', 'create', 'news', '--name', 'News', '--double-opt-in', 'on']);
    expect(topic.code, topic.err).toBe(0);
    expect((await remote(['topics'])).out).toContain('news\topt-in double-opt-in\tpublic\tNews');
    expect((await local(['topic', 'update', 'news', '--double-opt-in', 'maybe'])).code).toBe(2);

    const made = await local([
      'form',
      'create',
      '--name',
      'Footer',
      '--topic',
      'news',
      '--consent-text',
      'Send me the news',
      '--sender',
      'news@acme.test',
      '--origins',
      'https://www.acme.test',
      '--json',
    ]);
    expect(made.code, made.err).toBe(0);
    const form = JSON.parse(made.out) as { ref: string; consentVersion: number; allowedOrigins: string[] };
    expect(form).toMatchObject({ consentVersion: 1, allowedOrigins: ['https://www.acme.test'] });
    const there = await remote([
      'form',
      'create',
      '--name',
      'Sidebar',
      '--topic',
      'news',
      '--consent-text',
      'Yes please',
      '--sender',
      'news@acme.test',
    ]);
    expect(there.code, there.err).toBe(0);
    expect(there.out).toMatch(/Created form frm_\w+: POST \/subscribe\/frm_\w+/);
    const here = await local(['forms']);
    expect(here.code, here.err).toBe(0);
    expect((await remote(['forms'])).out).toBe(here.out);
    expect(here.out).toContain(`${form.ref}\ttopic news\tv1\tFooter`);

    const updated = await remote(['form', 'update', form.ref, '--consent-text', 'Send me the news, v2']);
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toContain('consent text v2');
    const listed = await client.forms.get(form.ref);
    expect(listed.form.consentTexts.map((t) => t.version)).toEqual([1, 2]);
    // An unknown topic is refused, nothing written.
    const refused = await local([
      'form',
      'create',
      '--name',
      'X',
      '--topic',
      'nope',
      '--consent-text',
      'x',
      '--sender',
      'news@acme.test',
    ]);
    expect(refused.code).not.toBe(0);
    expect((await client.forms.list()).forms).toHaveLength(2);

    // The served endpoint: a signup is pending, and the mailed link confirms it.
    const res = await fetch(`${base}/subscribe/${form.ref}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://www.acme.test' },
      body: JSON.stringify({ email: 'ann@example.test' }),
    });
    expect(res.status).toBe(200);
    const [mail] = await sink.waitFor(1, 20_000);
    const link = /href="([^"]*\/confirm\/[^"]+)"/.exec(String(mail?.parsed.html))?.[1] ?? '';
    expect(link.startsWith(base)).toBe(true);
    expect((await remote(['contact', 'topics', 'ann@example.test'])).out).toContain('news\tpending\tpublic');
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);
    expect((await local(['contact', 'topics', 'ann@example.test'])).out).toContain(
      'news\tsubscribed\tpublic',
    );
    const history = await local(['contact', 'consent', 'ann@example.test']);
    expect(history.out).toContain(`signup news=pending\tform:${form.ref}`);
    expect(history.out).toContain(`confirm news=subscribed\tform:${form.ref}`);

    const removed = await remote(['form', 'delete', form.ref]);
    expect(removed.code, removed.err).toBe(0);
    expect((await local(['forms'])).out).not.toContain(form.ref);
  });
});
