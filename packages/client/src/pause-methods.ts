import type { Client } from 'openapi-fetch';
import type { CallOptions, OperationBody, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';

/** Pause and resume: a broadcast, the project's whole sending, or a destination (issue 31). */
export interface PauseMethods {
  /** `GET /pauses`: the project's pauses in force, with who paused, why and until when. */
  list(options?: CallOptions): Promise<OperationResult<'listPauses'>>;
  /** `POST /broadcasts/{ref}/pause`: deliveries in flight finish, no other is sent until resumed. */
  pauseBroadcast(
    ref: string,
    body?: OperationBody<'pauseBroadcast'>,
    options?: CallOptions,
  ): Promise<OperationResult<'pauseBroadcast'>>;
  /** `POST /broadcasts/{ref}/resume`: continues where it stopped, none sent twice. */
  resumeBroadcast(ref: string, options?: CallOptions): Promise<OperationResult<'resumeBroadcast'>>;
  /** `POST /sending/pause`: every mailing of the project. */
  pauseSending(
    body?: OperationBody<'pauseSending'>,
    options?: CallOptions,
  ): Promise<OperationResult<'pauseSending'>>;
  /** `POST /sending/resume`. */
  resumeSending(options?: CallOptions): Promise<OperationResult<'resumeSending'>>;
  /** `POST /destinations/{name}/pause`: a recipient domain, or a group of `domains`; `minutes` to end by itself. */
  pauseDestination(
    name: string,
    body?: OperationBody<'pauseDestination'>,
    options?: CallOptions,
  ): Promise<OperationResult<'pauseDestination'>>;
  /** `POST /destinations/{name}/resume`. */
  resumeDestination(name: string, options?: CallOptions): Promise<OperationResult<'resumeDestination'>>;
}

/** What the methods share with the rest of the client (create-client.ts). */
export interface ClientHelpers {
  init(call: CallOptions | undefined): { headers?: Record<string, string>; signal?: AbortSignal };
  dataOf<Data>(call: Promise<{ data?: { data: Data }; response: Response }>): Promise<Data>;
}

/** The pause methods over `api`. */
export function pauseMethods(api: Client<paths>, { init, dataOf }: ClientHelpers): PauseMethods {
  const ref = (value: string) => ({ path: { ref: value } });
  const name = (value: string) => ({ path: { name: value } });
  return {
    list: (call) => dataOf(api.GET('/pauses', init(call))),
    pauseBroadcast: (value, body, call) =>
      dataOf(api.POST('/broadcasts/{ref}/pause', { params: ref(value), body: body ?? {}, ...init(call) })),
    resumeBroadcast: (value, call) =>
      dataOf(api.POST('/broadcasts/{ref}/resume', { params: ref(value), ...init(call) })),
    pauseSending: (body, call) => dataOf(api.POST('/sending/pause', { body: body ?? {}, ...init(call) })),
    resumeSending: (call) => dataOf(api.POST('/sending/resume', init(call))),
    pauseDestination: (value, body, call) =>
      dataOf(
        api.POST('/destinations/{name}/pause', { params: name(value), body: body ?? {}, ...init(call) }),
      ),
    resumeDestination: (value, call) =>
      dataOf(api.POST('/destinations/{name}/resume', { params: name(value), ...init(call) })),
  };
}
