import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { type AudienceMethods, audienceMethods } from './audience-methods.js';
import { type AutomationMethods, automationMethods } from './automation-methods.js';
import { dataOf, init, pathOf } from './call-envelope.js';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import { type FormMethods, formMethods } from './form-methods.js';
import { MailroomApiError } from './mailroom-api-error.js';
import type { paths } from './openapi-types.js';
import { type PauseMethods, pauseMethods } from './pause-methods.js';
import { type ReceivingMethods, receivingMethods } from './receiving-methods.js';
import { type ResourceMethods, resourceMethods } from './resource-methods.js';
import { type TopicMethods, topicMethods } from './topic-methods.js';

// The types of operations and calls live in client-types.ts (the method groups of other files read them).
export type {
  CallOptions,
  OperationBody,
  OperationId,
  OperationQuery,
  OperationResult,
  Schemas,
} from './client-types.js';

/** How to reach a Mailroom server. */
export interface MailroomClientOptions {
  /** Where the API is mounted: `http://127.0.0.1:3000` for `mailroom serve`, `https://example.com/api`. */
  url: string;
  /** A project key (the project secret, `sk_live_...`), sent as `Authorization: Bearer <key>`. */
  key: string;
  /** The fetch to call (a test double, a proxy agent). @default globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every call, besides the authorization. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * The typed client of one project on one server. Each method is one route and resolves to the `data` of
 * its answer; a refused call rejects with a {@link MailroomApiError}. A route without a method here is
 * reached through `api`, typed from the same document.
 */
export interface MailroomClient extends ResourceMethods, AudienceMethods {
  /**
   * The openapi-fetch client of the whole document (`api.GET('/webhooks')`), with the key and the base
   * URL set. It resolves to `{ data, response }` on success and rejects with a {@link MailroomApiError}
   * otherwise (it never resolves with `error`).
   */
  readonly api: Client<paths>;
  /** `POST /send/mail`: one message to at most 10 recipients. */
  send(body: OperationBody<'sendMail'>, options?: CallOptions): Promise<OperationResult<'sendMail'>>;
  /**
   * `POST /send/mail/batch`: up to 100 distinct messages (`{ items, mode? }`). `strict` (the default)
   * throws for one bad item (`VALIDATION_FAILED`, an issue per problem at `items[i]...`); `partial` answers
   * each item by index, accepted (`ref`) or refused (`error`).
   */
  sendBatch(
    body: OperationBody<'sendMailBatch'>,
    options?: CallOptions,
  ): Promise<OperationResult<'sendMailBatch'>>;
  /** `POST /send/mail/broadcast`: a broadcast's initial batch, or a later batch (`broadcastRef`). */
  broadcast(
    body: OperationBody<'sendBroadcast'>,
    options?: CallOptions,
  ): Promise<OperationResult<'sendBroadcast'>>;
  /** `POST /send/mail/broadcast/{ref}/cancel`. */
  cancelBroadcast(ref: string, options?: CallOptions): Promise<OperationResult<'cancelBroadcast'>>;
  /** `POST /send/mail/broadcast/{ref}/reschedule`: `scheduleFor` is ISO-8601 with `Z` or an offset. */
  rescheduleBroadcast(
    ref: string,
    scheduleFor: string,
    options?: CallOptions,
  ): Promise<OperationResult<'rescheduleBroadcast'>>;
  /** `GET /events`: a page of the project's events, oldest first; pass `next` as `after` for the next. */
  listEvents(
    query?: OperationQuery<'listEvents'>,
    options?: CallOptions,
  ): Promise<OperationResult<'listEvents'>>;
  /** The project's webhook endpoints. */
  readonly webhooks: {
    /** `GET /webhooks` (never their secrets). */
    list(options?: CallOptions): Promise<OperationResult<'listWebhooks'>>;
    /** `POST /webhooks`: the answer holds the signing secret, shown once. */
    add(body: OperationBody<'addWebhook'>, options?: CallOptions): Promise<OperationResult<'addWebhook'>>;
    /** `PATCH /webhooks/{id}`. */
    setEnabled(
      id: string,
      enabled: boolean,
      options?: CallOptions,
    ): Promise<OperationResult<'setWebhookEnabled'>>;
    /** `DELETE /webhooks/{id}`. */
    remove(id: string, options?: CallOptions): Promise<OperationResult<'removeWebhook'>>;
    /** `POST /webhooks/{id}/rotate-secret`: the new secret, shown once. */
    rotateSecret(id: string, options?: CallOptions): Promise<OperationResult<'rotateWebhookSecret'>>;
  };
  /** The project's sending domains. */
  readonly domains: {
    /** `GET /domains`. */
    list(options?: CallOptions): Promise<OperationResult<'listDomains'>>;
    /** `POST /domains`: a DKIM key is made; the answer lists the records to publish. */
    add(body: OperationBody<'addDomain'>, options?: CallOptions): Promise<OperationResult<'addDomain'>>;
    /** `GET /domains/{name}`. */
    get(name: string, options?: CallOptions): Promise<OperationResult<'getDomain'>>;
    /** `DELETE /domains/{name}`. */
    remove(name: string, options?: CallOptions): Promise<OperationResult<'removeDomain'>>;
    /** `POST /domains/{name}/verify`: checks through DNS now (on the server). */
    verify(name: string, options?: CallOptions): Promise<OperationResult<'verifyDomain'>>;
    /** `POST /domains/{name}/rotate-dkim`. */
    rotateDkim(
      name: string,
      body?: OperationBody<'rotateDkim'>,
      options?: CallOptions,
    ): Promise<OperationResult<'rotateDkim'>>;
  };
  /** Pause and resume a broadcast, the project's sending, or a destination (pause-methods.ts). */
  readonly pauses: PauseMethods;
  /** Topics, contacts' topic states and the consent history (topic-methods.ts). */
  readonly topics: TopicMethods;
  /** Tracked events, workflows and their runs (automation-methods.ts). */
  readonly automations: AutomationMethods;
  /** Signup forms (form-methods.ts). */
  readonly forms: FormMethods;
  /** Receiving routes and received messages (receiving-methods.ts). */
  readonly receiving: ReceivingMethods;
}

/**
 * A typed client of the Mailroom HTTP API for the project of `key`.
 *
 * @example
 * const mailroom = createMailroomClient({ url: 'http://127.0.0.1:3000', key: process.env.MAILROOM_KEY! });
 * const { ref } = await mailroom.send({ subject: 'Hi', sender: 'news@acme.com', message: '<p>Hi</p>',
 *   recipients: ['ada@example.com'] });
 */
export function createMailroomClient(options: MailroomClientOptions): MailroomClient {
  const api = createClient<paths>({
    baseUrl: options.url.replace(/\/+$/, ''),
    headers: { ...options.headers, authorization: `Bearer ${options.key}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  api.use(refusalsThrow);
  const path = pathOf;
  return {
    api,
    ...resourceMethods(api),
    ...audienceMethods(api),
    send: (body, call) => dataOf(api.POST('/send/mail', { body, ...init(call) })),
    sendBatch: (body, call) => dataOf(api.POST('/send/mail/batch', { body, ...init(call) })),
    broadcast: (body, call) => dataOf(api.POST('/send/mail/broadcast', { body, ...init(call) })),
    cancelBroadcast: (ref, call) =>
      dataOf(api.POST('/send/mail/broadcast/{ref}/cancel', { params: path('ref', ref), ...init(call) })),
    rescheduleBroadcast: (ref, scheduleFor, call) =>
      dataOf(
        api.POST('/send/mail/broadcast/{ref}/reschedule', {
          params: path('ref', ref),
          body: { scheduleFor },
          ...init(call),
        }),
      ),
    listEvents: (query, call) => dataOf(api.GET('/events', { params: { query }, ...init(call) })),
    webhooks: {
      list: (call) => dataOf(api.GET('/webhooks', init(call))),
      add: (body, call) => dataOf(api.POST('/webhooks', { body, ...init(call) })),
      setEnabled: (id, enabled, call) =>
        dataOf(api.PATCH('/webhooks/{id}', { params: path('id', id), body: { enabled }, ...init(call) })),
      remove: (id, call) => dataOf(api.DELETE('/webhooks/{id}', { params: path('id', id), ...init(call) })),
      rotateSecret: (id, call) =>
        dataOf(api.POST('/webhooks/{id}/rotate-secret', { params: path('id', id), ...init(call) })),
    },
    domains: {
      list: (call) => dataOf(api.GET('/domains', init(call))),
      add: (body, call) => dataOf(api.POST('/domains', { body, ...init(call) })),
      get: (name, call) => dataOf(api.GET('/domains/{name}', { params: path('name', name), ...init(call) })),
      remove: (name, call) =>
        dataOf(api.DELETE('/domains/{name}', { params: path('name', name), ...init(call) })),
      verify: (name, call) =>
        dataOf(api.POST('/domains/{name}/verify', { params: path('name', name), ...init(call) })),
      rotateDkim: (name, body, call) =>
        dataOf(
          api.POST('/domains/{name}/rotate-dkim', {
            params: path('name', name),
            body: body ?? {},
            ...init(call),
          }),
        ),
    },
    pauses: pauseMethods(api, { init, dataOf }),
    topics: topicMethods(api, { init, dataOf }),
    automations: automationMethods(api, { init, dataOf }),
    forms: formMethods(api, { init, dataOf }),
    receiving: receivingMethods(api, { init, dataOf }),
  };
}

/**
 * Every refused answer rejects the call with the error envelope it carries; so does a success that is
 * not JSON where JSON is expected (a login page or a wrong mount point answering 200), which would
 * otherwise reject with a bare SyntaxError.
 */
const refusalsThrow: Middleware = {
  async onResponse({ response, options }) {
    if (!response.ok) throw await MailroomApiError.fromResponse(response);
    const type = response.headers.get('content-type') ?? '';
    if (options.parseAs === 'json' && response.status !== 204 && !/\bjson\b/i.test(type)) {
      const message = `HTTP ${response.status} answered ${type || 'no content type'}, not JSON: is ${response.url} under the API's mount point?`;
      throw new MailroomApiError(response.status, { message, statusCode: response.status, code: 'INTERNAL' });
    }
    return undefined;
  },
};
