import type { ErrorCode } from '../base/errors.js';
import type { ContentSnapshot, RenderedContent, TemplateFormat } from '../store/records.js';
import type { RenderRecipient } from './recipient-scope.js';
import type { TemplateCheckResult } from './template-check.js';

/** One job of the preview thread: a content rendered for one recipient, or a template source checked. */
export type PreviewRequest =
  | {
      kind: 'render';
      job: number;
      content: ContentSnapshot;
      recipient: RenderRecipient;
      strictVariables: boolean;
    }
  | {
      kind: 'check';
      job: number;
      format: TemplateFormat;
      source: string;
      subject: string | null;
      /** Names the source in the messages, for example `template welcome`. */
      name: string;
    };

/** A failure inside the preview thread, as data (an Error does not cross threads with its fields). */
export interface PreviewFailure {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** The preview thread's answer: the rendered content, the check, or the failure, and the thread time it took. */
export type PreviewReply =
  | { job: number; ms: number; rendered: RenderedContent }
  | { job: number; ms: number; checked: TemplateCheckResult }
  | { job: number; ms: number; error: PreviewFailure };

/**
 * The preview thread is loaded, ready to render: its first message, and again when it has loaded a part for
 * the job it holds (MJML, with the first MJML check), so that job's hard limit counts from then.
 */
export interface PreviewReady {
  ready: true;
}

/**
 * The preview thread starts loading a part (MJML) for the job it holds: that job's hard limit waits for the
 * next {@link PreviewReady} (loading is the server's cost, seconds on a busy machine, not the template's),
 * bounded by a limit of its own.
 */
export interface PreviewLoading {
  loading: true;
}
