import type { Clock, Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import type { ContentSnapshot, RenderedContent, TemplateFormat } from '../store/records.js';
import type { PreviewRequest } from './preview-protocol.js';
import { type PreviewThreadHost, type PreviewTurn, sharedPreviewThreadHost } from './preview-thread-host.js';
import type { RenderRecipient } from './recipient-scope.js';
import { createRenderBudget, DEFAULT_RENDER_MS_PER_MINUTE, type RenderBudget } from './render-budget.js';
import type { TemplateCheckResult } from './template-check.js';

/** Options of {@link createPreviewRenderer}. */
export interface PreviewRendererOptions {
  clock: Clock;
  logger: Logger;
  strictVariables: boolean;
  /** Render time each project may spend per minute, in milliseconds. @default 10_000 */
  msPerMinute?: number;
  /** The budget to charge (the engine's, shared with sends); absent, one of `msPerMinute` is made. */
  budget?: RenderBudget;
  /**
   * Longest one render may hold the thread, in milliseconds, whatever it does: past it the thread is
   * stopped and started again. liquidjs stops a part at its render limit (1 s) already; this bounds the
   * rest (parsing, a part that never yields to the limit's check). @default 5_000
   */
  hardLimitMs?: number;
  /** Jobs a project may have waiting (8 parallel template writes are normal); more get 429. @default 16 */
  queuedPerProject?: number;
  /** The thread's host: by default the process's, shared by its engines (`preview-thread-host.ts`). */
  host?: PreviewThreadHost;
}

/**
 * Renders previews on a thread of their own, never on the engine's main thread and never on the threads
 * that render deliveries: a template built to spin costs its project, not the server's other clients.
 * One render runs at a time; the projects waiting take turns (round-robin), so a project that queues many
 * previews delays another project's by one render at most. Each project's render time is budgeted
 * ({@link createRenderBudget}); over it, its previews are refused with `RATE_LIMITED` and `retryAfter`.
 */
export interface PreviewRenderer {
  /**
   * The content rendered for one recipient, as the project's preview.
   * @throws MailroomError `RATE_LIMITED` (over the project's budget, or too many waiting), the render's
   * error (`RENDER_FAILED`, `TEMPLATE_INVALID`), or a retryable `INTERNAL` when the thread died.
   */
  render(projectId: string, content: ContentSnapshot, recipient: RenderRecipient): Promise<RenderedContent>;
  /**
   * Checks a template source and subject as `checkTemplate` does (MJML compile, Liquid parse), on the same
   * thread and within the same budget: a 1 MiB MJML source costs its project, not the main thread.
   * @throws MailroomError `RATE_LIMITED`, or a fault of the checker (`INTERNAL`).
   */
  check(
    projectId: string,
    template: { format: TemplateFormat; source: string; subject: string | null; name: string },
  ): Promise<TemplateCheckResult>;
  /**
   * Refuses a project over its budget before any work is done for its preview (the template read).
   * @throws MailroomError `RATE_LIMITED` with `retryAfter`.
   */
  admit(projectId: string): void;
  /** Gives up its hold on the thread (its running job stops the thread); waiting renders reject. */
  close(): Promise<void>;
}

interface Job {
  projectId: string;
  request: PreviewRequest;
  resolve(result: RenderedContent | TemplateCheckResult): void;
  reject(error: unknown): void;
}

/**
 * How long a thread may take to load a part (MJML) for a job before that job is stopped: loading is not the
 * template's time (the hard limit restarts after it), but a thread that never finishes loading must not
 * hold its jobs forever.
 */
const LOADING_LIMIT_MS = 60_000;

/** Job numbers, unique in the process: renderers share its thread. */
let nextJob = 0;

/** The preview renderer of one engine; its thread (the process's, see `preview-thread-host.ts`) starts with the first preview. */
export function createPreviewRenderer(options: PreviewRendererOptions): PreviewRenderer {
  const { clock, logger } = options;
  const budget =
    options.budget ?? createRenderBudget(clock, options.msPerMinute ?? DEFAULT_RENDER_MS_PER_MINUTE);
  const hardLimitMs = options.hardLimitMs ?? 5_000;
  const queuedPerProject = options.queuedPerProject ?? 16;
  /** Waiting renders per project; the map's order is the round-robin's. */
  const queues = new Map<string, Job[]>();
  /** The render on the thread; `timer` is armed once the thread is ready. */
  let running: { job: Job; timer?: NodeJS.Timeout } | undefined;
  let closed = false;
  const lease = (options.host ?? sharedPreviewThreadHost()).acquire(() => pump());

  /** What the thread says about `job`, the running one. */
  const turnOf = (job: Job): PreviewTurn => ({
    loading() {
      // Loading a part for the running job: its hard limit waits for the next ready, within its own bound.
      if (running?.job !== job) return;
      clearTimeout(running.timer);
      running.timer = hardLimit(job, LOADING_LIMIT_MS);
    },
    ready() {
      // Loaded, or loaded a part (MJML) for the running job: its clock starts anew.
      if (running?.job !== job) return;
      clearTimeout(running.timer);
      running.timer = hardLimit(job);
    },
    reply(reply) {
      if (running?.job !== job) return;
      clearTimeout(running.timer);
      running = undefined;
      budget.charge(job.projectId, reply.ms);
      if ('rendered' in reply) job.resolve(reply.rendered);
      else if ('checked' in reply) job.resolve(reply.checked);
      else
        job.reject(
          new MailroomError(reply.error.code, reply.error.message, { retryable: reply.error.retryable }),
        );
      pump();
    },
    died(error) {
      if (running?.job !== job || closed) return;
      logger.error({ err: error }, 'preview thread died; starting another');
      clearTimeout(running.timer);
      running = undefined;
      job.reject(
        new MailroomError('INTERNAL', 'preview thread died', {
          cause: error,
          retryable: true,
          source: 'render',
        }),
      );
      pump();
    },
  });

  function pump(): void {
    if (running || closed) return;
    for (const [projectId, queue] of queues) {
      // Spent while it waited: the rest of its renders are refused now, not run.
      const wait = budget.waitSeconds(projectId);
      if (wait > 0) {
        queues.delete(projectId);
        for (const job of queue) job.reject(overBudget(wait));
        continue;
      }
      const job = queue[0] as Job;
      // Another engine's job holds the process's thread: the lease calls `pump` again once it is free.
      if (!lease.tryRun(job.request, turnOf(job))) return;
      queues.delete(projectId);
      queue.shift();
      // Its other renders go to the back of the turn.
      if (queue.length > 0) queues.set(projectId, queue);
      running = { job };
      if (lease.ready) running.timer = hardLimit(job);
      return;
    }
  }

  /** Stops `job` after `limitMs`, and the thread with it (a new one starts for the next job). */
  function hardLimit(job: Job, limitMs = hardLimitMs): NodeJS.Timeout {
    return setTimeout(() => {
      if (running?.job !== job) return;
      running = undefined;
      budget.charge(job.projectId, hardLimitMs);
      job.reject(
        new MailroomError('RENDER_FAILED', `Rendering took longer than ${limitMs} ms and was stopped`),
      );
      lease.stop();
      pump();
    }, limitMs);
  }

  /** Queues a job of the project (refused over its budget or its queue), and runs the next in turn. */
  async function enqueue(
    projectId: string,
    request: (job: number) => PreviewRequest,
  ): Promise<RenderedContent | TemplateCheckResult> {
    if (closed) throw new MailroomError('INTERNAL', 'preview renderer closed', { retryable: true });
    budget.check(projectId);
    const queue = queues.get(projectId) ?? [];
    if (queue.length >= queuedPerProject) {
      throw new MailroomError(
        'RATE_LIMITED',
        `This project has ${queuedPerProject} renders waiting; try again`,
        {
          retryAfter: 1,
        },
      );
    }
    return new Promise((resolve, reject) => {
      queue.push({ projectId, request: request(++nextJob), resolve, reject });
      if (!queues.has(projectId)) queues.set(projectId, queue);
      pump();
    });
  }

  return {
    async render(projectId, content, recipient) {
      const strictVariables = options.strictVariables;
      return (await enqueue(projectId, (job) => ({
        kind: 'render',
        job,
        content,
        recipient,
        strictVariables,
      }))) as RenderedContent;
    },

    async check(projectId, template) {
      return (await enqueue(projectId, (job) => ({
        kind: 'check',
        job,
        ...template,
      }))) as TemplateCheckResult;
    },

    admit(projectId) {
      budget.check(projectId);
    },

    async close() {
      closed = true;
      const closing = new MailroomError('INTERNAL', 'preview renderer closed', { retryable: true });
      if (running) {
        clearTimeout(running.timer);
        running.job.reject(closing);
        running = undefined;
      }
      for (const queue of queues.values()) for (const job of queue) job.reject(closing);
      queues.clear();
      await lease.release();
    },
  };
}

function overBudget(wait: number): MailroomError {
  return new MailroomError('RATE_LIMITED', `This project used its render time; try again in ${wait} s`, {
    retryAfter: wait,
  });
}
