import type { Client } from 'openapi-fetch';
import { dataOf, init, pathOf } from './call-envelope.js';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';

/** The client's methods for templates, senders, suppressions and API keys (a part of `MailroomClient`). */
export interface ResourceMethods {
  /** The project's templates (`/templates`). */
  readonly templates: {
    /** `GET /templates`: a page by ref; pass `nextCursor` as `cursor` for the next. */
    list(
      query?: OperationQuery<'listTemplates'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listTemplates'>>;
    /** `GET /templates/{ref}`: its current version. */
    get(ref: string, options?: CallOptions): Promise<OperationResult<'getTemplate'>>;
    /** `POST /templates`: version 1 (MJML is compiled now); `CONFLICT` if the ref exists. */
    create(
      body: OperationBody<'createTemplate'>,
      options?: CallOptions,
    ): Promise<OperationResult<'createTemplate'>>;
    /** `PUT /templates/{ref}`: the next version; absent `format` and `subject` keep the current ones. */
    update(
      ref: string,
      body: OperationBody<'updateTemplate'>,
      options?: CallOptions,
    ): Promise<OperationResult<'updateTemplate'>>;
    /** `DELETE /templates/{ref}` (mailings already accepted are unaffected). */
    remove(ref: string, options?: CallOptions): Promise<OperationResult<'removeTemplate'>>;
    /** `POST /templates/{ref}/validate`: every problem with its line, nothing saved (`valid: false`, no throw). */
    validate(
      ref: string,
      body?: OperationBody<'validateTemplate'>,
      options?: CallOptions,
    ): Promise<OperationResult<'validateTemplate'>>;
    /** `POST /templates/{ref}/preview`: subject, HTML and text for the given variables and recipient. */
    preview(
      ref: string,
      body?: OperationBody<'previewTemplate'>,
      options?: CallOptions,
    ): Promise<OperationResult<'previewTemplate'>>;
  };
  /** The project's sender identities (`/senders`). */
  readonly senders: {
    /** `GET /senders`: a page by address. */
    list(
      query?: OperationQuery<'listSenders'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listSenders'>>;
    /** `POST /senders`: `CONFLICT` if the address is one already. */
    add(body: OperationBody<'addSender'>, options?: CallOptions): Promise<OperationResult<'addSender'>>;
    /** `DELETE /senders/{email}`: requests from it are refused from now on. */
    remove(address: string, options?: CallOptions): Promise<OperationResult<'removeSender'>>;
  };
  /** The project's suppression list (`/suppressions`). */
  readonly suppressions: {
    /** `GET /suppressions`: a page by address; `q` searches (addresses containing it). */
    list(
      query?: OperationQuery<'listSuppressions'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listSuppressions'>>;
    /** `POST /suppressions`: the address gets no more broadcast mail. */
    add(
      body: OperationBody<'addSuppression'>,
      options?: CallOptions,
    ): Promise<OperationResult<'addSuppression'>>;
    /** `DELETE /suppressions/{email}`: the address may be mailed again; `NOT_FOUND` if not suppressed. */
    lift(address: string, options?: CallOptions): Promise<OperationResult<'liftSuppression'>>;
  };
  /** The project's API keys (`/keys`; a `full` key only). */
  readonly keys: {
    /** `GET /keys`: never their secrets. */
    list(query?: OperationQuery<'listKeys'>, options?: CallOptions): Promise<OperationResult<'listKeys'>>;
    /** `POST /keys`: the answer holds the new key's secret, shown once. */
    create(body: OperationBody<'createKey'>, options?: CallOptions): Promise<OperationResult<'createKey'>>;
    /** `DELETE /keys/{id}`: the key answers 401 from now on. */
    revoke(id: string, options?: CallOptions): Promise<OperationResult<'revokeKey'>>;
    /** `POST /keys/{id}/rotate`: a new key (secret shown once); the old one works `graceSeconds` more. */
    rotate(
      id: string,
      body?: OperationBody<'rotateKey'>,
      options?: CallOptions,
    ): Promise<OperationResult<'rotateKey'>>;
  };
}

/** The {@link ResourceMethods} over `api`. */
export function resourceMethods(api: Client<paths>): ResourceMethods {
  const email = (address: string) => pathOf('email', address);
  return {
    templates: {
      list: (query, call) => dataOf(api.GET('/templates', { params: { query }, ...init(call) })),
      get: (ref, call) => dataOf(api.GET('/templates/{ref}', { params: pathOf('ref', ref), ...init(call) })),
      create: (body, call) => dataOf(api.POST('/templates', { body, ...init(call) })),
      update: (ref, body, call) =>
        dataOf(api.PUT('/templates/{ref}', { params: pathOf('ref', ref), body, ...init(call) })),
      remove: (ref, call) =>
        dataOf(api.DELETE('/templates/{ref}', { params: pathOf('ref', ref), ...init(call) })),
      validate: (ref, body, call) =>
        dataOf(
          api.POST('/templates/{ref}/validate', {
            params: pathOf('ref', ref),
            body: body ?? {},
            ...init(call),
          }),
        ),
      preview: (ref, body, call) =>
        dataOf(
          api.POST('/templates/{ref}/preview', {
            params: pathOf('ref', ref),
            body: body ?? {},
            ...init(call),
          }),
        ),
    },
    senders: {
      list: (query, call) => dataOf(api.GET('/senders', { params: { query }, ...init(call) })),
      add: (body, call) => dataOf(api.POST('/senders', { body, ...init(call) })),
      remove: (address, call) =>
        dataOf(api.DELETE('/senders/{email}', { params: email(address), ...init(call) })),
    },
    suppressions: {
      list: (query, call) => dataOf(api.GET('/suppressions', { params: { query }, ...init(call) })),
      add: (body, call) => dataOf(api.POST('/suppressions', { body, ...init(call) })),
      lift: (address, call) =>
        dataOf(api.DELETE('/suppressions/{email}', { params: email(address), ...init(call) })),
    },
    keys: {
      list: (query, call) => dataOf(api.GET('/keys', { params: { query }, ...init(call) })),
      create: (body, call) => dataOf(api.POST('/keys', { body, ...init(call) })),
      revoke: (id, call) => dataOf(api.DELETE('/keys/{id}', { params: pathOf('id', id), ...init(call) })),
      rotate: (id, body, call) =>
        dataOf(
          api.POST('/keys/{id}/rotate', {
            params: pathOf('id', id),
            ...(body ? { body } : {}),
            ...init(call),
          }),
        ),
    },
  };
}
