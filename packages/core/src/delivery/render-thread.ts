/**
 * A render thread: keeps each mailing's content parsed once, renders recipients and builds their MIME
 * with the transport's composer, and returns the bytes. Started by `createRenderPool`.
 */
import { parentPort } from 'node:worker_threads';
import { isMailroomError } from '../base/errors.js';
// The render modules themselves, not the render index: that one also loads the MJML compiler.
import type { PreparedContent } from '../render/prepare-content.js';
import { renderDelivery } from '../render/render-delivery.js';
import type { DeliveryRecord, MailingRecord } from '../store/records.js';
import { prepareTracked, type TrackedContent, trackingRewrite } from '../tracking/tracking-links.js';
import type { CreateComposer, OutgoingMessage } from '../transport/transport.js';
import { composeMessage, type MailingParts } from './compose-message.js';
import { prepareWithDerivedText } from './prepare-derived-text.js';
import type { RenderFailure, RenderReply, RenderRequest } from './render-protocol.js';
import { type RunningRender, renderClockMs, runningRender } from './render-running.js';

type Mailing =
  | { record: MailingRecord; prepared: TrackedContent<PreparedContent>; parts: MailingParts }
  | { error: unknown };

const port = parentPort;
if (!port) throw new Error('render-thread must run in a worker thread');

const mailings = new Map<string, Mailing>();
let strictVariables = false;
let cancelled: Int32Array | undefined;
let running: RunningRender | undefined;
let compose: Promise<(message: OutgoingMessage) => Promise<Uint8Array>> | undefined;

function failure(error: unknown): RenderFailure {
  if (isMailroomError(error)) return { code: error.code, message: error.message, retryable: error.retryable };
  return {
    code: 'INTERNAL',
    message: error instanceof Error ? error.message : String(error),
    retryable: false,
  };
}

async function build(request: Extract<RenderRequest, { type: 'build' }>): Promise<RenderReply> {
  const mailing = mailings.get(request.mailingId);
  const { job } = request;
  // Taken off this thread while it waited (behind a runaway render of its project): built elsewhere.
  if (cancelled && Atomics.load(cancelled, job % cancelled.length) === job) {
    return { job, stage: 'render', error: failure(new Error('build taken off this thread')), renderMs: 0 };
  }
  if (!mailing || !compose) {
    return { job, stage: 'render', error: failure(new Error('mailing not registered')), renderMs: 0 };
  }
  if ('error' in mailing) return { job, stage: 'render', error: failure(mailing.error), renderMs: 0 };
  let content: ReturnType<typeof renderDelivery>;
  const started = performance.now();
  let renderMs: number;
  // The render is what may run away (the composition after it is bounded): the pool's watch sees it here.
  if (running) {
    running.since[0] = renderClockMs();
    Atomics.store(running.job, 0, job);
  }
  try {
    const stamp = { deliveryId: request.deliveryId, sentAt: Math.floor(request.now / 1000) };
    content = renderDelivery(mailing.prepared, request.recipient, trackingRewrite(mailing.prepared, stamp));
    renderMs = performance.now() - started;
  } catch (error) {
    return { job, stage: 'render', error: failure(error), renderMs: performance.now() - started };
  } finally {
    if (running) Atomics.store(running.job, 0, 0);
  }
  try {
    const message = composeMessage(
      mailing.record,
      request.recipient as DeliveryRecord,
      content,
      mailing.parts,
      request.headers,
      new Date(request.now),
    );
    const raw = await (await compose)(message);
    return { job, raw, content: request.keepContent ? content : null, renderMs };
  } catch (error) {
    return { job, stage: 'compose', error: failure(error), renderMs };
  }
}

port.on('message', (request: RenderRequest) => {
  switch (request.type) {
    case 'init':
      strictVariables = request.strictVariables;
      cancelled = request.cancelled;
      running = runningRender(request.running);
      compose = import(request.composer.module).then((module: { createComposer: CreateComposer }) =>
        module.createComposer(request.composer.options),
      );
      // A composer that cannot load fails every job with its error, rather than the thread.
      compose.catch(() => {});
      return;
    case 'mailing':
      try {
        mailings.set(request.mailing.id, {
          record: request.mailing,
          prepared: prepareTracked(request.mailing.content, request.tracking, (content) =>
            prepareWithDerivedText(content, { strictVariables }),
          ),
          parts: request.parts,
        });
      } catch (error) {
        mailings.set(request.mailing.id, { error });
      }
      return;
    case 'forget':
      mailings.delete(request.mailingId);
      return;
    case 'build':
      void build(request).then((reply) => {
        // The bytes move to the main thread instead of being copied, unless they share a pooled buffer.
        const whole =
          'raw' in reply &&
          reply.raw.byteOffset === 0 &&
          reply.raw.byteLength === reply.raw.buffer.byteLength;
        const transfer = whole ? [reply.raw.buffer as ArrayBuffer] : [];
        port.postMessage(reply, transfer);
      });
      return;
  }
});
