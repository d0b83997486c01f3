import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type MailroomError } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCli } from './support/cli-harness.js';

/**
 * A broken template names its file (or, embedded, the template) and the line, once (issue 29): not the
 * working directory that mjml puts in its own message, and not mjml's message repeated after ours.
 */
describe('template errors name the file and the line', () => {
  let dir: string;
  let db: string;
  let projectId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-template-errors-'));
    db = join(dir, 'm.db');
    const created = startCli(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    expect(await created.done).toBe(0);
    projectId = (JSON.parse(created.out) as { project: { id: string } }).project.id;
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function add(file: string, source: string, extra: string[] = []): Promise<string> {
    writeFileSync(join(dir, file), source);
    const cli = startCli(dir, [
      'template',
      'add',
      '--project',
      projectId,
      '--ref',
      'welcome',
      '--file',
      file,
      '--database',
      db,
      ...extra,
    ]);
    expect(await cli.done).toBe(1);
    return cli.err;
  }

  const count = (text: string, part: string) => text.split(part).length - 1;

  it('MJML: "Invalid MJML in <file>: line N <tag>", once, without the working directory', async () => {
    const err = await add('welcome.mjml', '<mjml>\n  <mj-body><mj-foo>x</mj-foo></mj-body>\n</mjml>\n');
    expect(err).toBe(
      "mailroom: Invalid MJML in welcome.mjml: line 2 <mj-foo>: Element mj-foo doesn't exist or is not registered\n",
    );
    expect(err).not.toContain(dir);
    expect(count(err, "doesn't exist")).toBe(1);
  });

  it('Liquid: the file, the problem and its line, once', async () => {
    const err = await add('receipt.html', '<p>Thanks</p>\n<p>{% if paid %}Paid</p>\n');
    expect(err).toMatch(/^mailroom: receipt\.html: tag \{% if paid %\} not closed, line:2, col:4\n$/);
    expect(count(err, 'not closed')).toBe(1);

    const mjml = await add(
      'welcome.mjml',
      '<mjml><mj-body><mj-section><mj-column>\n<mj-text>{{ name </mj-text>\n</mj-column></mj-section></mj-body></mjml>',
    );
    expect(mjml).toMatch(/^mailroom: welcome\.mjml: output .* not closed, line:2, col:10\n$/);
  });

  it('the --subject names itself', async () => {
    const err = await add('ok.txt', 'Hello', ['--subject', 'Hi {{ name']);
    expect(err).toMatch(/^mailroom: --subject: output "\{\{ name" not closed, line:1, col:4\n$/);
  });

  it('embedded, without a file, the template is named by its ref', async () => {
    const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const { project } = await mailroom.admin.createProject({ name: 'P' });
    const error = (await mailroom.admin
      .createTemplate(project.id, {
        ref: 'welcome',
        format: 'mjml',
        source: '<mjml><mj-body><mj-foo/></mj-body></mjml>',
      })
      .catch((e: unknown) => e)) as MailroomError;
    expect(error.code).toBe('TEMPLATE_INVALID');
    expect(error.message).toBe(
      "Invalid MJML in template welcome: line 1 <mj-foo>: Element mj-foo doesn't exist or is not registered",
    );
    const named = (await mailroom.admin
      .createTemplate(project.id, { ref: 'r', format: 'html', source: '{{ x', sourceName: 'emails/r.html' })
      .catch((e: unknown) => e)) as MailroomError;
    expect(named.message).toMatch(/^emails\/r\.html: output "\{\{ x" not closed, line:1, col:1$/);
  });
});
