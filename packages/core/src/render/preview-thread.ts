/**
 * The preview thread: parses and renders one content for one recipient per request, or checks a template
 * source (MJML compile, Liquid parse), off the engine's main thread, and says how long it took (the project's render budget is charged that). Started by
 * `createPreviewRenderer`.
 */
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { isMailroomError } from '../base/errors.js';
import { prepareContent } from './prepare-content.js';
import type {
  PreviewFailure,
  PreviewLoading,
  PreviewReady,
  PreviewReply,
  PreviewRequest,
} from './preview-protocol.js';
import { renderDelivery } from './render-delivery.js';

if (!parentPort) throw new Error('preview-thread must run in a worker thread');
const port = parentPort;

function failure(error: unknown): PreviewFailure {
  if (isMailroomError(error)) return { code: error.code, message: error.message, retryable: error.retryable };
  return {
    code: 'INTERNAL',
    message: error instanceof Error ? error.message : String(error),
    retryable: false,
  };
}

/** The template checker: loaded by the first check, not with the thread. */
let checker: typeof import('./template-check.js') | undefined;
/**
 * Whether MJML is loaded: by the first check of an MJML source only. It costs 0.5-1.3 s of CPU, and HTML
 * and text checks (most templates; every render) never use it.
 */
let mjmlLoaded = false;
const WARM_UP =
  '<mjml><mj-body><mj-section><mj-column><mj-text>warm</mj-text></mj-column></mj-section></mj-body></mjml>';

async function run(request: PreviewRequest): Promise<PreviewReply> {
  let started = performance.now();
  try {
    if (request.kind === 'check') {
      checker ??= await import('./template-check.js');
      if (request.format === 'mjml' && !mjmlLoaded) {
        // The job's hard limit waits while MJML loads (PreviewLoading), and starts anew at the ready below.
        port.postMessage({ loading: true } satisfies PreviewLoading);
        // mjml loads its parts with its first compile: a small document loads them.
        await checker.checkTemplate('mjml', WARM_UP, null, 'warm-up');
        mjmlLoaded = true;
        // Loading MJML takes seconds on a busy machine: the server's cost, not the template's. Ready again
        // restarts the render's hard limit, and the project is charged from here.
        port.postMessage({ ready: true } satisfies PreviewReady);
        started = performance.now();
      }
      const checked = await checker.checkTemplate(
        request.format,
        request.source,
        request.subject,
        request.name,
      );
      return { job: request.job, ms: performance.now() - started, checked };
    }
    const prepared = prepareContent(request.content, { strictVariables: request.strictVariables });
    const rendered = renderDelivery(prepared, request.recipient);
    return { job: request.job, ms: performance.now() - started, rendered };
  } catch (error) {
    return { job: request.job, ms: performance.now() - started, error: failure(error) };
  }
}

port.on('message', (request: PreviewRequest) => {
  void run(request).then((reply) => port.postMessage(reply));
});
// Loaded: the renderer starts a render's clock from here, not from the thread's start (seconds from source).
port.postMessage({ ready: true } satisfies PreviewReady);
