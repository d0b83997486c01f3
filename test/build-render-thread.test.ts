import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Core from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { build } from 'tsup';
import { afterAll, describe, expect, it } from 'vitest';

const coreDir = fileURLToPath(new URL('../packages/core/', import.meta.url));

/**
 * Every other test runs the engine from its sources, where the render thread's `.ts` file sits next to
 * the pool. Users run the build: there the pool starts `render-thread.js` next to `dist/index.js`, which
 * exists only if the bundle config names it as an entry (it once did not, and a built `mailroom serve`
 * with a render thread sent nothing). This builds the core package with its own config into a folder
 * inside the package (so its dependencies resolve as from `dist/`) and delivers through that bundle's
 * render thread, started by plain Node with no TypeScript loader.
 */
describe('the built core package', () => {
  const outDir = mkdtempSync(join(coreDir, '.build-check-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('renders on its render thread: the thread entry is built next to the bundle', async () => {
    // The package's own build config, loaded at run time (it is outside the type-checked program).
    const configUrl = new URL('../packages/core/tsup.config.ts', import.meta.url).href;
    const coreConfig = ((await import(configUrl)) as { default: { entry: Record<string, string> } }).default;
    const { entry } = coreConfig;
    // The package's dependencies stay external, as in its own build (tsup reads them from the package.json
    // of the folder it runs in: the repository's, here): the thread imports the bundle with plain Node.
    const corePackage = JSON.parse(readFileSync(join(coreDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    await build({
      ...coreConfig,
      external: [
        ...((coreConfig as { external?: string[] }).external ?? []),
        ...Object.keys(corePackage.dependencies ?? {}),
        ...Object.keys(corePackage.peerDependencies ?? {}),
      ],
      entry: Object.fromEntries(Object.entries(entry).map(([name, file]) => [name, join(coreDir, file)])),
      outDir,
      dts: false,
      sourcemap: false,
      silent: true,
    });
    const core = (await import(pathToFileURL(join(outDir, 'index.js')).href)) as typeof Core;
    const sent: Array<{ to: string; mime: string }> = [];
    // A transport of bytes without `fields`: the engine renders and composes on its render thread, with the
    // core's own composer loaded there from the bundle (no fallback to the main thread: a thread that
    // cannot start fails the delivery).
    const transport: Core.Transport = {
      name: 'check',
      capabilities: { dkim: false, maxConcurrency: 4, textEncoding: 'quoted-printable' },
      async send(message) {
        sent.push({ to: message.envelope.to.join(','), mime: new TextDecoder().decode(message.raw) });
        return {
          messageId: message.messageId,
          accepted: message.envelope.to,
          rejected: [],
          response: '250 ok',
        };
      },
    };
    const mailroom = core.createMailroom({
      store: memoryStore(),
      transport,
      worker: { renderThreads: 1, flushMs: 10 },
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme' });
      await mailroom.broadcast(secret, {
        subject: 'Hello {{ recipient.firstName }}',
        sender: 'news@acme.test',
        message: '<p>Your code is {{ code }}.</p>',
        recipients: [
          { address: 'ada@example.test', name: 'Ada Lovelace', variables: { code: 'A1' } },
          { address: 'alan@example.test', name: 'Alan Turing', variables: { code: 'B2' } },
        ],
      });
      await mailroom.worker.drain();
    } finally {
      await mailroom.close();
    }
    expect(readFileSync(join(outDir, 'index.js'), 'utf8')).toContain('render-thread');
    const byAddress = new Map(sent.map((m) => [m.to, m.mime]));
    expect([...byAddress.keys()].sort()).toEqual(['ada@example.test', 'alan@example.test']);
    expect(byAddress.get('ada@example.test')).toMatch(/^Subject: Hello Ada\r$/m);
    expect(byAddress.get('ada@example.test')).toContain('<p>Your code is A1.</p>');
    expect(byAddress.get('alan@example.test')).toMatch(/^Subject: Hello Alan\r$/m);
    expect(byAddress.get('alan@example.test')).toContain('<p>Your code is B2.</p>');

    // A received message is read and judged on the bundle's parse thread (`parse-thread.js` next to it),
    // its DNS lookups asked of the app's resolver on the main thread.
    const asked: string[] = [];
    const receiver = core.createMailroom({
      store: memoryStore(),
      transport,
      receiving: {
        resolver: {
          resolve: async (name, rrtype) => {
            asked.push(`${rrtype} ${name}`);
            if (rrtype === 'TXT' && name === 'sender.test') return [['v=spf1 ip4:127.0.0.1 -all']];
            throw Object.assign(new Error(`no ${rrtype} at ${name}`), { code: 'ENOTFOUND' });
          },
        },
      },
    });
    try {
      // The bundle's parse thread loads (without it, messages would be read on the main thread).
      await receiver.receiving.warm();
      const { secret } = await receiver.admin.createProject({ name: 'Inbox' });
      await receiver.receiving.addRoute(secret, {
        domain: 'in.acme.test',
        pattern: 'support',
        destination: { kind: 'store' },
      });
      const raw = 'From: Ana <ana@sender.test>\r\nTo: support@in.acme.test\r\nSubject: Hi\r\n\r\nHello\r\n';
      const receipt = await receiver.receiving.receive(new TextEncoder().encode(raw), {
        envelopeFrom: 'ana@sender.test',
        envelopeTo: ['support@in.acme.test'],
        remoteAddress: '127.0.0.1',
        helo: 'mx.sender.test',
      });
      const mail = await receiver.receiving.getMessage(secret, receipt.messageIds[0] as string);
      expect(mail).toMatchObject({ subject: 'Hi', text: 'Hello\n', auth: { spf: 'pass' } });
      expect(asked).toContain('TXT sender.test');
    } finally {
      await receiver.close();
    }
    expect(readFileSync(join(outDir, 'index.js'), 'utf8')).toContain('parse-thread');
  }, 120_000);
});
