import type { AuthContext, Logger, Mailroom } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { escapeHtml, type SafeHtml } from '../pages/html.js';
import { htmlPage } from './dashboard-http.js';
import type { PageContext } from './layout.js';
import type { PauseActions } from './pause-actions.js';

/** One request being answered. */
export interface Call {
  req: NeutralRequest;
  requestId: string;
  nonce: string;
  /** The dashboard's URL root: mount point and prefix. */
  root: string;
  /** GET for HEAD: the same answer, without its body. */
  method: string;
  segments: string[];
  /** Set once the session is known, so that error pages keep the navigation. */
  ctx?: PageContext;
  /** The answer is read by a script or a frame, not a person: refusals as JSON. */
  machine: boolean;
}

/** What the areas' routes work with. */
export interface AreaDeps {
  /** The engine whose reads and actions the pages show. */
  readonly mailroom: Mailroom;
  /** Where actions are logged (never a cookie nor a secret). */
  readonly logger: Logger;
  /** The pause forms' actions, shared by the broadcast pages and the pauses page. */
  readonly pauseActions: PauseActions;
}

/**
 * One page family of a signed-in project: answers a call whose path starts with its segment, or
 * `undefined` for a path under that segment that it does not know (then the dashboard answers 404).
 */
export type PageRoute = (call: Call, auth: AuthContext) => Promise<NeutralResponse> | undefined;

/** One area's page families, by the first segment of their path (`broadcasts`, `keys`, …). */
export type AreaRoutes = ReadonlyMap<string, PageRoute>;

export const GET = ['GET', 'HEAD'] as const;
export const POST = ['POST'] as const;

/** Refusal of a method, with the methods the path does take (for `Allow`). */
export class MethodNotAllowed extends MailroomError {
  constructor(readonly allow: readonly string[]) {
    super('METHOD_NOT_ALLOWED', `Use ${allow.join(' or ')}`);
  }
}

export function allow(call: Call, methods: readonly string[]): void {
  if (!methods.includes(call.method)) throw new MethodNotAllowed(methods);
}

export function allowed(
  call: Call,
  methods: readonly string[],
  run: () => Promise<NeutralResponse>,
): Promise<NeutralResponse> {
  allow(call, methods);
  return run();
}

export function ctxOf(call: Call): PageContext {
  if (!call.ctx) throw new MailroomError('INTERNAL', 'page rendered before the session was read');
  return call.ctx;
}

export function page(call: Call, status: number, body: SafeHtml): NeutralResponse {
  return htmlPage(status, call.requestId, call.nonce, body);
}

/** A text body as a document of its own for the preview frame. */
export function textDocument(text: string): string {
  return `<!doctype html><meta charset="utf-8"><pre style="white-space:pre-wrap;font:14px/1.5 ui-monospace,monospace;margin:1rem">${escapeHtml(text)}</pre>`;
}
