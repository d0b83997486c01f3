import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FIELD_LIMITS } from '@mailroom/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 30, item 4: oversized fields are refused over HTTP, on both binders, with the field named, and
 * leave nothing behind: 600 refused requests with a 1 MiB subject (the issue's reproduction, which used
 * to queue them all and keep 140 MB), then 10 MB variables and 100,000 variables, and the server's heap
 * after full collections is back near where it was. The server runs in a child process
 * (`support/caps-memory-child.ts`, --expose-gc) so that the heap measured is its own, not this client's.
 */

const CHILD = fileURLToPath(new URL('./support/caps-memory-child.ts', import.meta.url));

interface Ready {
  express: string;
  fastify: string;
  secret: string;
  projectId: string;
}

let child: ChildProcess;
let ready: Ready;

function ask<T>(message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(message);
  });
}

beforeAll(async () => {
  child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=mailroom-source', '--expose-gc', '--max-old-space-size=512', CHILD],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  ready = await new Promise<Ready>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^ready (.*)$/m.exec(out);
      if (line?.[1]) resolve(JSON.parse(line[1]) as Ready);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
}, 60_000);

afterAll(() => {
  child?.disconnect();
});

const MIB = 1024 * 1024;

function baseBody(): Record<string, unknown> {
  return {
    subject: 'Hello',
    sender: { address: 'noreply@acme.test', name: 'Acme' },
    message: 'Hi {{ name }}',
    recipients: [{ address: 'bob@example.com' }],
  };
}

/** The three hostile bodies of the issue, as JSON text (built once: they are large). */
const bigSubject = JSON.stringify({ ...baseBody(), subject: 'S'.repeat(MIB) });
const bigVariable = JSON.stringify({
  ...baseBody(),
  message: undefined,
  template: { ref: 'welcome', variables: { blob: 'v'.repeat(10_000_000) } },
});
const manyVariables = JSON.stringify({
  ...baseBody(),
  recipients: [
    {
      address: 'bob@example.com',
      variables: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`v${i}`, i])),
    },
  ],
});

async function post(base: string, path: string, body: string) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ready.secret}`, 'content-type': 'application/json' },
    body,
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      code?: string;
      message?: string;
      issues?: { path: unknown[]; message: string }[];
    },
  };
}

describe.each(['express', 'fastify'] as const)('field caps over HTTP (%s)', (binder) => {
  const base = () => ready[binder];

  it('refuses a 1 MiB subject with 400 naming subject', async () => {
    const { status, body } = await post(base(), '/send/mail', bigSubject);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.issues).toContainEqual({
      code: 'too_big',
      path: ['subject'],
      message: `Must be at most ${FIELD_LIMITS.subject.max} characters`,
    });
  });

  it('refuses a 10 MB template variable with 400 naming template.variables', async () => {
    const { status, body } = await post(base(), '/send/mail', bigVariable);
    expect(status).toBe(400);
    expect(body.issues?.map((i) => i.path)).toContainEqual(['template', 'variables']);
    expect(JSON.stringify(body)).toContain(`${FIELD_LIMITS.templateVariables.max} bytes`);
  });

  it('refuses 100,000 variables with 400 naming recipients[0].variables, on both endpoints', async () => {
    for (const path of ['/send/mail', '/send/mail/broadcast']) {
      const { status, body } = await post(base(), path, manyVariables);
      expect(status).toBe(400);
      expect(body.issues).toContainEqual({
        code: 'custom',
        path: ['recipients', 0, 'variables'],
        message: `Must hold at most ${FIELD_LIMITS.variableKeys.max} keys (counted at every depth)`,
      });
    }
  });

  it('refuses a body over the endpoint cap with 413, and accepts a body at the caps', async () => {
    // reschedule is not a send endpoint: its cap is 1 MiB, not the 10 MiB bodyLimit.
    const big = JSON.stringify({ scheduleFor: 'x'.repeat(MIB + 10) });
    const res = await fetch(`${base()}/send/mail/broadcast/bc_x/reschedule`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ready.secret}`, 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    const atCaps = JSON.stringify({
      ...baseBody(),
      subject: 's'.repeat(FIELD_LIMITS.subject.max),
      sender: { address: 'noreply@acme.test', name: 'n'.repeat(FIELD_LIMITS.name.max) },
      recipients: [
        {
          address: 'bob@example.com',
          name: 'b'.repeat(FIELD_LIMITS.name.max),
          variables: { x: 'y'.repeat(FIELD_LIMITS.recipientVariables.max - 20) },
        },
      ],
    });
    const ok = await post(base(), '/send/mail', atCaps);
    expect(ok.status).toBe(200);
  });
});

describe('memory after refused requests', () => {
  it('is back near its baseline after 600 oversized subjects, 10 MB variables and 100k variables', async () => {
    const bodies = [bigSubject, bigVariable, manyVariables];
    const before = await ask<{ mailings: number }>('mailings');
    // Warm-up: the first requests build schemas and caches that stay; they are not what is measured.
    for (const binder of ['express', 'fastify'] as const) {
      for (const body of bodies) expect((await post(ready[binder], '/send/mail', body)).status).toBe(400);
    }
    const baseline = await ask<{ heapUsed: number }>('heap');

    const jobs: Array<() => Promise<number>> = [];
    for (let i = 0; i < 600; i++) {
      const binder = i % 2 === 0 ? 'express' : 'fastify';
      jobs.push(async () => (await post(ready[binder], '/send/mail', bigSubject)).status);
    }
    for (let i = 0; i < 10; i++) {
      const binder = i % 2 === 0 ? 'express' : 'fastify';
      jobs.push(async () => (await post(ready[binder], '/send/mail', bigVariable)).status);
      jobs.push(async () => (await post(ready[binder], '/send/mail/broadcast', manyVariables)).status);
    }
    const statuses: number[] = [];
    // Four at a time, as a few clients would.
    for (let i = 0; i < jobs.length; i += 4) {
      statuses.push(...(await Promise.all(jobs.slice(i, i + 4).map((job) => job()))));
    }
    expect(statuses.every((s) => s === 400)).toBe(true);

    const after = await ask<{ heapUsed: number }>('heap');
    const grown = after.heapUsed - baseline.heapUsed;
    // 600 stored 1 MiB subjects alone would be 600+ MiB; what is left must be noise.
    expect(grown).toBeLessThan(16 * MIB);
    expect((await ask<{ mailings: number }>('mailings')).mailings).toBe(before.mailings);
  }, 180_000);
});
