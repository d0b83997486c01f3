/**
 * Issue 40, receiving mail from the CLI: `mailroom route list|add|remove` and `mailroom inbound list|show`,
 * on the database (`--project`, `--database`) and through a real `mailroom serve` on 127.0.0.1 (`--url`,
 * `--key`): the same answers either way. The received messages are taken by an engine on the same SQLite
 * file whose SPF and DMARC checks ask a loopback DNS server (never the machine's resolver).
 */
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-harness.js';
import { type CliProject, startCliProject } from './support/cli-project.js';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';

const INBOX = 'in.acme.test';

describe('receiving routes and received mail from the CLI, on the database and through mailroom serve', () => {
  let fixture: CliProject;
  let zone: DnsZoneServer;
  let engine: Mailroom;

  const local = (argv: string[]) => fixture.local(argv);
  const remote = (argv: string[]) => fixture.remote(argv);

  beforeAll(async () => {
    fixture = await startCliProject('receiving');
    zone = await startDnsZone({
      'bank.test': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      '_dmarc.bank.test': { TXT: ['v=DMARC1; p=reject'] },
    });
    engine = createMailroom({
      store: sqlStore({ url: fixture.db }),
      transport: memoryTransport(),
      receiving: { resolver: zone.resolver() },
    });
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
    await zone?.close();
    await fixture?.close();
  });

  it('adds routes here and there, lists them the same both ways, refuses a taken address, removes', async () => {
    const none = await local(['route', 'list']);
    expect(none.out).toContain('No receiving routes');
    const support = await local(['route', 'add', INBOX, 'support']);
    expect(support.code, support.err).toBe(0);
    expect(support.out).toMatch(new RegExp(`Added route rte_\\w+: support@${INBOX} -> store`));
    const replies = await remote(['route', 'add', INBOX, 'reply+*', '--handler', '--json']);
    expect(replies.code, replies.err).toBe(0);
    const route = JSON.parse(replies.out) as { id: string; pattern: string; destination: { kind: string } };
    expect(route).toMatchObject({ pattern: 'reply+*', destination: { kind: 'handler' } });
    const here = await local(['route', 'list']);
    expect((await remote(['route', 'list'])).out).toBe(here.out);
    expect(here.out).toContain(`reply+*@${INBOX}\thandler`);
    expect(here.out).toContain(`support@${INBOX}\tstore`);

    const taken = await remote(['route', 'add', INBOX, 'support']);
    expect(taken.code).toBe(1);
    expect(taken.err).toContain(`support@${INBOX} is already routed`);
    expect((await local(['route', 'add', INBOX, 'x', '--handler', '--store'])).code).toBe(2);
    const unknownEndpoint = await local(['route', 'add', INBOX, 'sales', '--webhook', 'wh_nobody']);
    expect(unknownEndpoint.code).toBe(1);
    expect(unknownEndpoint.err).toContain('wh_nobody');

    const removed = await remote(['route', 'remove', route.id]);
    expect(removed.code, removed.err).toBe(0);
    expect((await local(['route', 'list'])).out).not.toContain('reply+*');
    expect((await local(['route', 'remove', route.id])).code).toBe(1);
  });

  it('lists and shows received messages the same both ways, with their authentication results', async () => {
    expect((await local(['inbound', 'list'])).out).toContain('No received messages.');
    const raw = [
      'From: Bank <alerts@bank.test>',
      `To: support@${INBOX}`,
      'Subject: Verify \u001b[31myour\u001b[0m account',
      'Message-ID: <forged-1@bank.test>',
      'Date: Sun, 29 Nov 2026 09:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Click here',
      '',
    ].join('\r\n');
    await engine.receiving.receive(new TextEncoder().encode(raw), {
      envelopeFrom: 'alerts@bank.test',
      envelopeTo: [`support@${INBOX}`],
      remoteAddress: '127.0.0.1',
      helo: 'mx.forger.test',
    });
    const here = await local(['inbound', 'list']);
    expect(here.code, here.err).toBe(0);
    expect((await remote(['inbound', 'list'])).out).toBe(here.out);
    const [line = ''] = here.out.trim().split('\n');
    const [id = ''] = line.split('\t');
    expect(id).toMatch(/^inm_/);
    expect(line).toContain('alerts@bank.test');
    expect(line).toContain('spf=fail');
    expect(line).toContain('dmarc=fail');
    // A terminal escape in a subject is not passed to the terminal.
    expect(line).not.toContain('\u001b');

    const shown = await remote(['inbound', 'show', id]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toBe((await local(['inbound', 'show', id])).out);
    expect(shown.out).toContain('From:        Bank <alerts@bank.test>');
    expect(shown.out).toContain('Message-ID:  <forged-1@bank.test>');
    expect(shown.out).toContain('Click here');
    const json = JSON.parse((await local(['inbound', 'show', id, '--json'])).out) as {
      id: string;
      auth: { dmarc: string };
    };
    expect(json).toMatchObject({ id, auth: { dmarc: 'fail' } });
    expect((await remote(['inbound', 'show', 'inm_nobody'])).code).toBe(1);
    expect((await remote(['inbound', 'list', '--limit', '0'])).code).toBe(2);
  });

  it('shows each attachment with its name, type, size and a signed URL that downloads it, both ways', async () => {
    const pdf = Buffer.alloc(2345, 7);
    const raw = [
      'From: Ana <ana@sender.test>',
      `To: support@${INBOX}`,
      'Subject: The invoice',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Attached.',
      '--b1',
      'Content-Type: application/pdf; name="invoice 7.pdf"',
      'Content-Disposition: attachment; filename="invoice 7.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      pdf.toString('base64'),
      '--b1--',
      '',
    ].join('\r\n');
    const receipt = await engine.receiving.receive(new TextEncoder().encode(raw), {
      envelopeFrom: 'ana@sender.test',
      envelopeTo: [`support@${INBOX}`],
      remoteAddress: '127.0.0.1',
    });
    const id = receipt.messageIds[0] as string;
    const line = (out: string) => out.split('\n').find((l) => l.includes('invoice 7.pdf')) ?? '';

    const shown = await remote(['inbound', 'show', id]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('Attachments: 1');
    const [name, type, size, url = ''] = line(shown.out).trim().split('\t');
    expect([name, type, size]).toEqual(['invoice 7.pdf', 'application/pdf', '2345 bytes']);
    expect(url.startsWith(`${fixture.base}/inbound/attachments/`)).toBe(true);
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);

    // On the database: the URL under the server's public URL, signed with the key the server keeps there.
    const here = await local(['inbound', 'show', id, '--public-url', `${fixture.base}/`]);
    expect(here.code, here.err).toBe(0);
    const localUrl = line(here.out).trim().split('\t')[3] ?? '';
    expect(localUrl.startsWith(`${fixture.base}/inbound/attachments/`)).toBe(true);
    const again = await fetch(localUrl);
    expect(Buffer.from(await again.arrayBuffer()).equals(pdf)).toBe(true);
    // Without a public URL, the line says how to get one; remotely the server's own is used.
    expect(line((await local(['inbound', 'show', id])).out)).toContain('no URL: give --public-url');
    const refused = await remote(['inbound', 'show', id, '--public-url', fixture.base]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--public-url is not taken with --url');
    const json = JSON.parse((await remote(['inbound', 'show', id, '--json'])).out) as {
      attachments: Array<{ filename: string; url: string }>;
    };
    expect(json.attachments[0]).toMatchObject({ filename: 'invoice 7.pdf' });
    expect(json.attachments[0]?.url).toMatch(/\/inbound\/attachments\//);
  });

  it('shows and changes the receiving settings both ways, refusing bad values clearly', async () => {
    const shown = await local(['inbound', 'settings']);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('Retention:         30 days (the default)');
    expect(shown.out).toContain('Max message size:  26214400 bytes (the default)');
    expect(shown.out).toContain('Reply addresses:   off');
    expect((await remote(['inbound', 'settings'])).out).toBe(shown.out);

    const changed = await local([
      'inbound',
      'settings',
      '--retention-days',
      '14',
      '--max-message-bytes',
      '5MiB',
    ]);
    expect(changed.code, changed.err).toBe(0);
    expect(changed.out).toContain('Retention:         14 days');
    expect(changed.out).toContain('Max message size:  5242880 bytes');
    // A change of one keeps the others.
    await remote(['route', 'add', INBOX, 'reply+*', '--store']);
    const reply = await remote(['inbound', 'settings', '--reply-domain', INBOX.toUpperCase(), '--json']);
    expect(reply.code, reply.err).toBe(0);
    expect(JSON.parse(reply.out)).toMatchObject({
      retention_days: 14,
      max_message_bytes: 5242880,
      reply_domain: INBOX,
      defaults: { retention_days: 30, max_message_bytes: 26214400 },
    });
    expect((await local(['inbound', 'settings'])).out).toContain(
      `Reply addresses:   reply+<delivery id>@${INBOX}`,
    );
    const reset = await remote([
      'inbound',
      'settings',
      '--retention-days',
      'default',
      '--reply-domain',
      'off',
    ]);
    expect(reset.code, reset.err).toBe(0);
    expect(reset.out).toContain('Retention:         30 days (the default)');
    expect(reset.out).toContain('Max message size:  5242880 bytes');
    expect(reset.out).toContain('Reply addresses:   off');

    // Bad values: usage errors (exit 2) naming the flag and its bounds, before anything is changed.
    for (const [flag, value, words] of [
      ['--retention-days', '0', '--retention-days must be a whole number of days from 1 to 36500'],
      ['--retention-days', 'forever', "got 'forever'"],
      [
        '--max-message-bytes',
        '12',
        '--max-message-bytes must be a whole number of bytes from 1024 to 104857600',
      ],
      ['--max-message-bytes', '200MiB', '104857600'],
      ['--reply-domain', ' ', '--reply-domain needs a domain, or off'],
    ] as const) {
      for (const run of [local, remote]) {
        const bad = await run(['inbound', 'settings', flag, value]);
        expect(bad.code, `${flag} ${value}`).toBe(2);
        expect(bad.err).toContain(words);
      }
    }
    const notDomain = await remote(['inbound', 'settings', '--reply-domain', 'not a domain']);
    expect(notDomain.code).toBe(2);
    expect(notDomain.err).toContain(
      "--reply-domain must be a domain name (in.example.com), or off; got 'not a domain'",
    );
    // The engine's refusal (exit 1): a domain no reply+* route of the project takes.
    const noRoute = await local(['inbound', 'settings', '--reply-domain', 'elsewhere.test']);
    expect(noRoute.code).toBe(1);
    expect(noRoute.err).toMatch(/reply\+/);
    expect((await local(['inbound', 'settings'])).out).toContain('Reply addresses:   off');
  });

  it('keeps the listener command: `mailroom inbound --help` is its help, `inbound list --help` the list', async () => {
    expect((await runCli(fixture.dir, ['inbound', '--help'])).out).toContain('inbound SMTP listener');
    const listHelp = await fixture.remote(['inbound', 'list', '--help']);
    expect(listHelp.out).toContain('Usage: mailroom inbound list');
  });
});
