import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEMO_SENDER,
  DEMO_TEMPLATE_REF,
  ensureDemoProject,
} from '../packages/cli/src/server/demo-project.js';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';

/**
 * The demo project of a first `mailroom serve` (issue 29): its mail loads nothing from a third party (no
 * web fonts), and the command it tells you to run to replace the template works as printed.
 */
describe('the demo project', () => {
  it('its welcome mail loads no web font and names the project in its template add hint', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const mailroom = createMailroom({ store, transport });
    const demo = await ensureDemoProject(mailroom, store);
    if (!demo) throw new Error('no demo project');
    await mailroom.send(demo.secret, {
      sender: DEMO_SENDER,
      template: { ref: DEMO_TEMPLATE_REF },
      recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
    });
    await mailroom.worker.drain();
    const html = transport.lastMessageTo('ada@example.test')?.html ?? '';
    expect(html).toContain('Hello Ada,');
    expect(html).not.toMatch(/fonts\.googleapis|@import|<link\b/i);
    expect(html).toContain(
      `npx mailroom template add --project ${demo.project.id} --ref welcome --file welcome.mjml`,
    );
    await mailroom.close();
  });

  describe('through mailroom serve', () => {
    let dir: string;
    const running: RunningCli[] = [];
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'mailroom-demo-'));
    });
    afterEach(async () => {
      for (const cli of running.splice(0)) {
        cli.stop();
        await cli.done;
      }
      rmSync(dir, { recursive: true, force: true });
    });

    for (const database of ['default', 'data/demo.db'] as const) {
      it(`prints a template add command that works as printed (${database} database)`, async () => {
        const flags = database === 'default' ? [] : ['--database', database];
        mkdirSync(join(dir, 'data'), { recursive: true });
        const serve = startCli(dir, ['serve', '--port', '0', '--outbox', join(dir, 'outbox'), ...flags]);
        running.push(serve);
        const [line] = await waitForOutput(serve, /npx mailroom template add --project prj_\w+ [^\n]+/);
        // The file it names was written by the first start, next to the SQLite file (issue 37).
        const file = database === 'default' ? 'welcome.mjml' : 'data/welcome.mjml';
        expect(line).toContain(`--file ${file}`);
        expect(readFileSync(join(dir, file), 'utf8')).toContain('<mj-title>Welcome to Mailroom</mj-title>');
        writeFileSync(
          join(dir, file),
          '<mjml><mj-body><mj-section><mj-column><mj-text>Mine, {{ recipient.firstName }}</mj-text></mj-column></mj-section></mj-body></mjml>',
        );
        const argv = line.replace(/^npx mailroom /, '').split(' ');
        const add = startCli(dir, argv);
        expect(await add.done, add.err).toBe(0);
        expect(add.out).toMatch(/Stored template welcome version 2/);
      });
    }
  });
});
