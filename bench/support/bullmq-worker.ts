/**
 * The stack a Node team would build instead of Mailroom, as the worker process of `delivery-corpus`:
 * a BullMQ worker on the local Redis that renders each job with liquidjs (the template parsed once; MJML
 * compiled once at start) and sends it through nodemailer's SMTP pool (5 connections, as the issue sets it;
 * `BENCH_BULLMQ_CONNECTIONS` another number, to see what the pool size alone gives this stack).
 * `bullmq-worker <queue> <template-ref> <smtp-port> <text: convert|none>`.
 *
 * The text part, like Mailroom's: converted from each recipient's HTML with html-to-text (compiled once),
 * which is what such a worker does; `none` sends HTML only (a cheaper message than Mailroom's).
 * Prints `ready` once the worker listens for jobs.
 */
import { createRequire } from 'node:module';
import { Worker } from 'bullmq';
import type Nodemailer from 'nodemailer';
import { corpusTemplate } from '../templates/index.js';

// Not root dependencies: load the copies the packages use.
const coreRequire = createRequire(new URL('../../packages/core/package.json', import.meta.url));
/** The part of liquidjs used here (a dependency of the core package, typed there). */
interface LiquidEngine {
  parse(source: string): unknown;
  renderSync(template: unknown, scope: object): string;
}
const { Liquid } = coreRequire('liquidjs') as { Liquid: new (options?: object) => LiquidEngine };
const mjml2html = coreRequire('mjml') as (mjml: string, options: object) => Promise<{ html: string }>;
const { compile } = coreRequire('html-to-text') as typeof import('html-to-text');
const nodemailer = createRequire(new URL('../../packages/smtp/package.json', import.meta.url))(
  'nodemailer',
) as typeof Nodemailer;

const [queueName, ref, port, textMode] = process.argv.slice(2);
if (!queueName || !ref || !port || (textMode !== 'convert' && textMode !== 'none')) {
  throw new Error('usage: bullmq-worker <queue> <template-ref> <smtp-port> <convert|none>');
}
const template = corpusTemplate(ref);

const htmlEngine = new Liquid({ outputEscape: 'escape' });
const textEngine = new Liquid();
const source = template.format === 'mjml' ? (await mjml2html(template.source, {})).html : template.source;
const subject = textEngine.parse(template.subject);
const html = template.format === 'text' ? null : htmlEngine.parse(source);
const text = template.format === 'text' ? textEngine.parse(source) : null;
const toText = compile({ wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }] });

const transporter = nodemailer.createTransport({
  host: '127.0.0.1',
  port: Number(port),
  pool: true,
  maxConnections: Number(process.env.BENCH_BULLMQ_CONNECTIONS ?? 5),
  ignoreTLS: true,
});

interface JobData {
  address: string;
  name: string;
  variables: Record<string, unknown>;
}

const worker = new Worker<JobData>(
  queueName,
  async (job) => {
    const { address, name, variables } = job.data;
    const [firstName = '', ...rest] = name.split(' ');
    const scope = {
      ...template.globals,
      ...variables,
      recipient: { address, name, firstName, lastName: rest.join(' ') },
    };
    const renderedHtml = html === null ? undefined : htmlEngine.renderSync(html, scope);
    const renderedText =
      text !== null
        ? textEngine.renderSync(text, scope)
        : textMode === 'convert' && renderedHtml !== undefined
          ? toText(renderedHtml)
          : undefined;
    await transporter.sendMail({
      from: 'Example <news@example.com>',
      to: `${name} <${address}>`,
      subject: textEngine.renderSync(subject, scope),
      ...(renderedHtml === undefined ? {} : { html: renderedHtml }),
      ...(renderedText === undefined ? {} : { text: renderedText }),
      // As Mailroom's transport and the loop: quoted-printable costs about twice as much on a large page.
      textEncoding: 'base64',
    });
  },
  { connection: { host: '127.0.0.1', port: 6379 }, concurrency: 50 },
);
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void worker.close().then(() => {
    transporter.close();
    process.exit(0);
  });
});
