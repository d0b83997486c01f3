import type { ErrorCode } from '../base/errors.js';
import type { ContentSnapshot, RenderedContent } from '../store/records.js';
import type { RenderRecipient } from './recipient-scope.js';

/** One render of the preview thread: a content parsed and rendered for one recipient. */
export interface PreviewRequest {
  job: number;
  content: ContentSnapshot;
  recipient: RenderRecipient;
  strictVariables: boolean;
}

/** A failure inside the preview thread, as data (an Error does not cross threads with its fields). */
export interface PreviewFailure {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** The preview thread's answer: the rendered content or the failure, and the thread time it took. */
export type PreviewReply =
  | { job: number; ms: number; rendered: RenderedContent }
  | { job: number; ms: number; error: PreviewFailure };

/** The preview thread's first message: loaded, ready to render. */
export interface PreviewReady {
  ready: true;
}
