/**
 * Helpers of the crash tests: seed a 10,000-recipient broadcast into a database, run delivery workers as
 * child processes (`crash-worker.ts`), and check what a counting sink received.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailroom, type DeliveryRecord, type Store } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { onTestFinished } from 'vitest';
import { childEntry } from './child-bundle.js';
import type { Arrival } from './crash-sink.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./crash-worker.ts', import.meta.url));

/** The seeded broadcast. */
export interface Seeded {
  ref: string;
  mailingId: string;
  addresses: string[];
}

/** Accepts a broadcast of `count` recipients (in batches of 250, through the engine) into `store`. */
export async function seedBroadcast(store: Store, count: number): Promise<Seeded> {
  const mailroom = createMailroom({ store, transport: memoryTransport() });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Crash' });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme' });
  const addresses = Array.from({ length: count }, (_, i) => `r${String(i).padStart(5, '0')}@example.test`);
  let ref: string | undefined;
  for (let i = 0; i < count; i += 250) {
    const recipients = addresses
      .slice(i, i + 250)
      .map((address, j) => ({ address, variables: { n: i + j } }));
    if (ref === undefined) {
      ({ ref } = await mailroom.broadcast(secret, {
        subject: 'Issue {{ n }} for {{ recipient.firstName }}',
        sender: 'news@acme.test',
        message: '<p>Hello {{ recipient.firstName }}, this is number {{ n }}.</p>',
        recipients,
      }));
    } else {
      await mailroom.broadcast(secret, { broadcastRef: ref, recipients });
    }
  }
  if (ref === undefined) throw new Error('nothing seeded');
  const mailing = await store.getMailing(project.id, ref);
  if (!mailing) throw new Error('seeded mailing not found');
  await mailroom.close();
  return { ref, mailingId: mailing.id, addresses };
}

/** A worker process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Resolves when the worker reports a completed mailing. */
  readonly completed: Promise<void>;
  /** Resolves with the signal (or exit code) the process ended with. */
  readonly exited: Promise<string>;
  /** What it wrote to stderr (errors it logged). */
  stderr(): string;
}

/** Starts a worker process and resolves once it runs. */
export async function startWorker(
  url: string,
  smtpPort: number,
  options: { batchSize: number; leaseMs: number; allowHosts?: string[]; automations?: boolean },
): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [
      // Bundled from the sources (child-bundle.ts): a quarter of tsx's start-up CPU, four to seven times a file.
      await childEntry(WORKER),
      url,
      String(smtpPort),
      String(options.batchSize),
      String(options.leaseMs),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        CRASH_ALLOW_HOSTS: (options.allowHosts ?? []).join(','),
        ...(options.automations ? { CRASH_AUTOMATIONS: '1' } : {}),
      },
    },
  );
  // A test that fails or times out before it kills its workers leaves none behind: one would send on to
  // the sink (or retry a closed one) for the rest of the run.
  // (Started outside a test, e.g. from a sink's callback after it ended, the caller's afterAll kills it.)
  try {
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  } catch {}
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  let out = '';
  let onStarted: () => void = () => {};
  let onCompleted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  const completed = new Promise<void>((resolve) => {
    onCompleted = resolve;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('started\n')) onStarted();
    if (out.includes('completed ')) onCompleted();
  });
  await Promise.race([
    started,
    exited.then((how) => {
      throw new Error(`worker exited (${how}) before starting: ${err}`);
    }),
  ]);
  return { child, completed, exited, stderr: () => err };
}

/** What the sink received, per recipient. */
export interface ReceivedSummary {
  /** Recipients with at least one message. */
  received: number;
  /** Seeded recipients with none. */
  lost: string[];
  /** Extra copies beyond the first, over all recipients. */
  duplicates: number;
  /** Recipients whose copies carry more than one Message-ID. */
  mixedIds: string[];
  /** Message-IDs shared by two recipients. */
  sharedIds: number;
}

/** Checks arrivals against the seeded addresses. */
export function summarize(arrivals: readonly Arrival[], addresses: readonly string[]): ReceivedSummary {
  const byRcpt = new Map<string, string[]>();
  for (const { rcpt, messageId } of arrivals) {
    const ids = byRcpt.get(rcpt) ?? [];
    ids.push(messageId);
    byRcpt.set(rcpt, ids);
  }
  let duplicates = 0;
  const mixedIds: string[] = [];
  const owners = new Map<string, string>();
  let sharedIds = 0;
  for (const [rcpt, ids] of byRcpt) {
    duplicates += ids.length - 1;
    if (new Set(ids).size > 1) mixedIds.push(rcpt);
    const id = ids[0] as string;
    if (owners.has(id) && owners.get(id) !== rcpt) sharedIds++;
    owners.set(id, rcpt);
  }
  return {
    received: byRcpt.size,
    lost: addresses.filter((a) => !byRcpt.has(a)),
    duplicates,
    mixedIds,
    sharedIds,
  };
}

/**
 * The extra copies each killed worker caused: a copy is charged to the worker that sent the copy before it
 * (which died without recording that send). `killedAfter[k]` is how many arrivals the sink had when
 * worker `k` was gone; arrivals up to it came from workers `0..k`.
 */
export function duplicatesPerKill(arrivals: readonly Arrival[], killedAfter: readonly number[]): number[] {
  const perKill = killedAfter.map(() => 0);
  const workerOf = (index: number) => {
    const k = killedAfter.findIndex((count) => index < count);
    return k < 0 ? killedAfter.length : k;
  };
  const last = new Map<string, number>();
  arrivals.forEach((arrival, index) => {
    const previous = last.get(arrival.rcpt);
    if (previous !== undefined) {
      const k = workerOf(previous);
      if (k < perKill.length) perKill[k] = (perKill[k] ?? 0) + 1;
    }
    last.set(arrival.rcpt, index);
  });
  return perKill;
}

/** Every delivery of a mailing, read in pages. */
export async function allDeliveries(store: Store, mailingId: string): Promise<DeliveryRecord[]> {
  const out: DeliveryRecord[] = [];
  for (;;) {
    const page = await store.listDeliveries(mailingId, { after: out.at(-1)?.address ?? null, limit: 1000 });
    out.push(...page);
    if (page.length < 1000) return out;
  }
}
