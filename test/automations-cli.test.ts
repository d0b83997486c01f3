/**
 * Issue 39, automations from the CLI: `mailroom automation create|update|pause|resume|delete|runs`,
 * `mailroom automations` and `mailroom track`, on the database (`--project`, `--database`) and through a
 * real `mailroom serve` on 127.0.0.1 (`--url`, `--key`), whose worker runs the workflow to the SMTP sink.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProject, startCliProject } from './support/cli-project.js';

describe('automations from the CLI, on the database and through mailroom serve', () => {
  let fixture: CliProject;
  let sink: CliProject['sink'];

  const local = (argv: string[]) => fixture.local(argv);
  const remote = (argv: string[]) => fixture.remote(argv);

  beforeAll(async () => {
    fixture = await startCliProject('automations', {
      before: async (project) => {
        expect((await project.local(['sender', 'add', 'hello@acme.test'])).code).toBe(0);
        writeFileSync(join(project.dir, 'welcome.txt'), 'Welcome aboard, {{ event.plan }}.');
        const added = await project.local([
          'template',
          'add',
          '--ref',
          'welcome',
          '--file',
          'welcome.txt',
          '--subject',
          'Welcome',
        ]);
        expect(added.code, added.err).toBe(0);
        writeFileSync(
          join(project.dir, 'welcome.json'),
          JSON.stringify({
            name: 'Welcome',
            trigger: { event: 'signup' },
            steps: [
              { id: 'hello', type: 'send', template: 'welcome', sender: 'hello@acme.test' },
              { type: 'wait', duration: '7d' },
            ],
          }),
        );
        writeFileSync(
          join(project.dir, 'bad.json'),
          JSON.stringify({
            name: 'Bad',
            trigger: { event: 'signup' },
            steps: [{ type: 'wait', duration: '2y' }],
          }),
        );
      },
    });
    ({ sink } = fixture);
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates a workflow from a file, lists it the same both ways, tracks an event the server runs to the sink', async () => {
    const bad = await local(['automation', 'create', 'bad.json']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('steps[0].duration');
    const made = await local(['automation', 'create', 'welcome.json', '--json']);
    expect(made.code, made.err).toBe(0);
    const { id } = JSON.parse(made.out) as { id: string };
    const here = await local(['automations']);
    expect(here.out).toContain(`${id}\tactive\tv1\ton signup\tWelcome`);
    const tracked = await remote([
      'track',
      'signup',
      'ann@example.test',
      '--id',
      'su-1',
      '--properties',
      '{"plan":"pro"}',
    ]);
    expect(tracked.code, tracked.err).toBe(0);
    expect(tracked.out).toContain('Tracked signup su-1.');
    expect((await local(['track', 'signup', 'ann@example.test', '--id', 'su-1'])).out).toContain(
      'Already tracked: su-1.',
    );
    // The server's worker runs the first step at once: the message reaches the sink.
    const [message] = await sink.waitFor(1, 15_000);
    expect(message?.parsed.subject).toBe('Welcome');
    expect(message?.parsed.text?.trim()).toBe('Welcome aboard, pro.');
    const runs = await remote(['automation', 'runs', id, '--status', 'active']);
    expect(runs.out).toMatch(/ann@example\.test\tactive\tat step-2 until/);
    expect((await remote(['automations'])).out).toBe((await local(['automations'])).out);
    // Runs per step: the send passed, the wait entered and waiting; the same on the database and remote.
    const stats = await remote(['automation', 'stats', id]);
    expect(stats.code, stats.err).toBe(0);
    expect(stats.out).toContain('step\ttype\tentered\twaiting\tpassed\texited');
    expect(stats.out).toContain('hello\tsend\t1\t0\t1\t0');
    expect(stats.out).toContain('step-2\twait\t1\t1\t0\t0');
    expect((await local(['automation', 'stats', id])).out).toBe(stats.out);

    expect((await remote(['automation', 'pause', id])).out).toContain(`Paused workflow ${id}.`);
    expect((await local(['automation', 'resume', id])).out).toContain(`Resumed workflow ${id}.`);
    const updated = await remote(['automation', 'update', id, 'welcome.json', '--json']);
    expect(JSON.parse(updated.out)).toMatchObject({ version: 2 });
    expect((await local(['automation', 'delete', id])).out).toContain(`Deleted workflow ${id}`);
    expect((await remote(['automations'])).out).toContain('No workflows yet');
  });
});
