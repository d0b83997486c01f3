/**
 * The plain nodemailer loop that the delivery benchmarks measure against: nodemailer's pooled SMTP
 * transport (5 connections) sending one identical message, built from the same mail options every time,
 * to `n` recipients, with 50 sends queued to keep the pool busy. Base64 text encoding, as Mailroom's
 * transport uses (quoted-printable costs about twice as much on a large page).
 */
import { createRequire } from 'node:module';
import type Nodemailer from 'nodemailer';
import type { SinkProcess } from './sink-process.js';

// nodemailer is a dependency of @mailroom/smtp, not of the workspace root: load the same copy the transport uses.
export const nodemailer = createRequire(new URL('../../packages/smtp/package.json', import.meta.url))(
  'nodemailer',
) as typeof Nodemailer;

/** The message the loop sends to everyone. */
export interface LoopMessage {
  from: string;
  subject: string;
  html: string | null;
  text: string;
}

/** What one loop measured. */
export interface LoopResult {
  perSecond: number;
  seconds: number;
  /** CPU time of this process per message (microseconds). */
  cpuMicrosPerMessage: number;
  /** CPU time of the sink process per message (microseconds). */
  sinkCpuMicrosPerMessage: number;
}

/** Sends `message` to `n` recipients through the sink; resolves once the sink has counted every one. */
export async function nodemailerLoop(
  sink: SinkProcess,
  message: LoopMessage,
  n: number,
): Promise<LoopResult> {
  const transporter = nodemailer.createTransport({
    host: '127.0.0.1',
    port: sink.port,
    pool: true,
    maxConnections: 5,
    ignoreTLS: true,
  });
  const mail = {
    from: message.from,
    to: 'Reader <reader@example.test>',
    subject: message.subject,
    ...(message.html === null ? {} : { html: message.html }),
    text: message.text,
    textEncoding: 'base64' as const,
  };
  await sink.reset();
  const sinkCpu0 = await sink.cpuMicros();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const envelopeFrom = /<([^>]+)>/.exec(message.from)?.[1] ?? message.from;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < n) {
        const i = next++;
        await transporter.sendMail({ ...mail, envelope: { from: envelopeFrom, to: [`r${i}@example.test`] } });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const sinkCpu = (await sink.cpuMicros()) - sinkCpu0;
  transporter.close();
  const got = await sink.count();
  if (got !== n) throw new Error(`nodemailer loop: the sink got ${got} of ${n}`);
  return {
    perSecond: Math.round(n / seconds),
    seconds: +seconds.toFixed(2),
    cpuMicrosPerMessage: Math.round((cpu.user + cpu.system) / n),
    sinkCpuMicrosPerMessage: Math.round(sinkCpu / n),
  };
}
