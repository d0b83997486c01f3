import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200_000, 7), Buffer.from('\n%%EOF')]);
const MiB = 1024 * 1024;

/** A loopback file host counting requests per path. */
async function fileHost() {
  const hits = new Map<string, number>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/files/report.pdf' || path === '/download?id=7') {
      res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': PDF.length })
        .end(PDF);
    } else if (path === '/huge-declared.pdf') {
      res.writeHead(200, { 'content-length': 25 * MiB + 1 });
      res.write('x');
    } else if (path === '/huge-chunked.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      const block = Buffer.alloc(MiB, 1);
      let sent = 0;
      const pump = () => {
        while (!res.destroyed && sent < 40 && res.write(block)) sent++;
        if (sent >= 40) res.end();
        else if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    } else {
      res.writeHead(404).end('no such file');
    }
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    allow: `127.0.0.1:${port}`,
    hits,
    connections: () => connections,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(storeCases())('attachments by URL on $name', ({ make }) => {
  let host: Awaited<ReturnType<typeof fileHost>>;
  let other: Awaited<ReturnType<typeof fileHost>>;
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let secret: string;
  let projectId: string;

  beforeAll(async () => {
    host = await fileHost();
    // A second host that is NOT on the allow-list: the guard must keep every request away from it.
    other = await fileHost();
  });
  afterAll(async () => {
    await host.close();
    await other.close();
  });
  beforeEach(async () => {
    host.hits.clear();
    transport = memoryTransport();
    mailroom = createMailroom({ store: await make(), transport, fetch: { allowHosts: [host.allow] } });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: 'billing@acme.test' });
  });
  afterEach(async () => {
    await mailroom.close();
  });

  const message = (attachments: unknown[], recipients: unknown = 'ann@example.test') => ({
    subject: 'Your invoice',
    sender: 'billing@acme.test',
    message: 'Attached.',
    recipients,
    attachments,
  });

  it('fetches a single message attachment once and hands the bytes to the transport', async () => {
    await mailroom.send(
      secret,
      message([
        { url: `${host.base}/files/report.pdf` },
        { name: 'Statement March.PDF', url: `${host.base}/download?id=7` },
      ]),
    );
    await mailroom.worker.drain();
    const [sent] = transport.outbox;
    expect(sent?.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['report.pdf', 'application/pdf'],
      ['Statement March.PDF', 'application/pdf'],
    ]);
    expect(Buffer.from(sent?.attachments[0]?.content ?? []).equals(PDF)).toBe(true);
    expect(Buffer.from(sent?.attachments[1]?.content ?? []).equals(PDF)).toBe(true);
    expect(host.hits.get('/files/report.pdf')).toBe(1);
  });

  it('fetches a broadcast attachment once for all its recipients', async () => {
    const recipients = Array.from({ length: 40 }, (_, i) => `r${i}@example.test`);
    const { ref } = await mailroom.broadcast(
      secret,
      message([{ url: `${host.base}/files/report.pdf` }], recipients),
    );
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(40);
    for (const m of transport.outbox)
      expect(Buffer.from(m.attachments[0]?.content ?? []).equals(PDF)).toBe(true);
    expect(host.hits.get('/files/report.pdf')).toBe(1);
    // The bytes are kept with the broadcast: workers (and later batches) never fetch.
    const stored = await mailroom.store.getMailing(projectId, ref);
    expect(stored?.attachments[0]?.contentBase64).toBe(PDF.toString('base64'));
    await mailroom.broadcast(secret, { broadcastRef: ref, recipients: ['late@example.test'] });
    await mailroom.worker.drain();
    expect(transport.messagesTo('late@example.test')[0]?.attachments[0]?.content.length).toBe(PDF.length);
    expect(host.hits.get('/files/report.pdf')).toBe(1);
  });

  it('fails the request at accept time when a URL cannot be fetched, with nothing written', async () => {
    await expect(
      mailroom.send(secret, message([{ url: `${host.base}/files/missing.pdf` }])),
    ).rejects.toMatchObject({
      code: 'FETCH_REFUSED',
      status: 422,
      message: expect.stringMatching(/missing\.pdf: the URL answered HTTP 404/),
    });
    await expect(
      mailroom.broadcast(secret, message([{ url: `${host.base}/files/missing.pdf` }], ['a@example.test'])),
    ).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
    const before = other.connections();
    await expect(
      mailroom.send(secret, message([{ url: `${other.base}/files/report.pdf` }])),
    ).rejects.toMatchObject({
      code: 'FETCH_REFUSED',
      message: expect.stringMatching(/127\.0\.0\.1 is loopback/),
    });
    await expect(
      mailroom.send(secret, message([{ url: 'http://169.254.169.254/latest/meta-data/iam.json' }])),
    ).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
    expect(other.connections()).toBe(before);
    expect(await mailroom.store.listMailings(projectId, 'message', { limit: 10 })).toEqual([]);
    expect(await mailroom.store.listMailings(projectId, 'broadcast', { limit: 10 })).toEqual([]);
    await mailroom.worker.drain();
    expect(transport.outbox).toEqual([]);
  });

  it('refuses attachments past 25 MiB in total with a 413, reading no more than the limit', async () => {
    for (const path of ['/huge-declared.pdf', '/huge-chunked.pdf']) {
      await expect(mailroom.send(secret, message([{ url: `${host.base}${path}` }]))).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        status: 413,
        message: expect.stringMatching(/pass the limit of 26214400 bytes in total/),
      });
    }
    // Inline content counts against the same budget as fetched files.
    const inline = { name: 'big.bin', content: Buffer.alloc(25 * MiB - 100_000).toString('base64') };
    await expect(
      mailroom.send(secret, message([inline, { url: `${host.base}/files/report.pdf` }])),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const eleven = Array.from({ length: 11 }, () => ({ url: `${host.base}/files/report.pdf` }));
    await expect(mailroom.send(secret, message(eleven))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(host.hits.get('/files/report.pdf') ?? 0).toBeLessThanOrEqual(1);
  });
});
