/**
 * Status reads beside a delivery, as a dashboard or a client polling its sends would make them: one
 * `POST /send/mail` first (for a message ref), then at a fixed rate, whatever the answers' latency (an
 * open model: a slow answer does not delay the next read, so pauses of the server show in the figures),
 * in turn `GET /broadcasts/:ref`, `GET /broadcasts?limit=20` and `GET /messages/:ref`.
 */
import { median } from './measure.js';
import { SENDER } from './serve-run.js';

/** What the reads saw: latencies in milliseconds. */
export interface StatusReadFigures {
  reads: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The first failing answer, to say why when `errors` is not 0. */
  firstError?: string;
}

/** A running reader: `stop()` waits for the reads in flight, then `figures()` holds. */
export interface StatusReader {
  stop(): Promise<void>;
  figures(): StatusReadFigures;
}

/** Starts reading `broadcastRef`'s status every `intervalMs` (rotating over the three reads). */
export function startStatusReader(
  call: { url: string; secret: string; broadcastRef: string },
  intervalMs = 30,
): StatusReader {
  const auth = { authorization: `Bearer ${call.secret}` };
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let errors = 0;
  let firstError: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const read = (path: string): void => {
    const started = performance.now();
    const done = fetch(`${call.url}${path}`, { headers: auth })
      .then(async (res) => {
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
        latencies.push(performance.now() - started);
      })
      .catch((error: unknown) => {
        errors++;
        firstError ??= String(error);
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };

  const started = (async () => {
    const res = await fetch(`${call.url}/send/mail`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Your receipt',
        sender: SENDER,
        message: '<p>Thanks for your order.</p>',
        recipients: [{ address: 'reader@example.com' }],
      }),
    });
    const json = (await res.json()) as { data?: { ref?: string } };
    const messageRef = json.data?.ref;
    if (!(res.ok && messageRef)) throw new Error(`POST /send/mail ${res.status}: ${JSON.stringify(json)}`);
    const paths = [
      `/broadcasts/${encodeURIComponent(call.broadcastRef)}`,
      '/broadcasts?limit=20',
      `/messages/${encodeURIComponent(messageRef)}`,
    ];
    let turn = 0;
    if (stopped) return;
    timer = setInterval(() => read(paths[turn++ % paths.length] as string), intervalMs);
  })();

  return {
    async stop() {
      stopped = true;
      await started;
      clearInterval(timer);
      await Promise.all(inFlight);
    },
    figures() {
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (q: number) =>
        +(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
      return {
        reads: latencies.length,
        errors,
        p50Ms: +median(latencies.length > 0 ? latencies : [0]).toFixed(1),
        p99Ms: at(0.99),
        maxMs: +(sorted.at(-1) ?? 0).toFixed(1),
        ...(firstError ? { firstError } : {}),
      };
    },
  };
}
