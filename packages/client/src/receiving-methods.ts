import type { Client } from 'openapi-fetch';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';
import type { ClientHelpers } from './pause-methods.js';

/** Receiving routes and the messages they took (issue 40). */
export interface ReceivingMethods {
  /** `GET /inbound/routes`: the project's receiving routes. */
  listRoutes(options?: CallOptions): Promise<OperationResult<'listReceivingRoutes'>>;
  /** `POST /inbound/routes`: domain, pattern (`support`, `reply+*`, `*`), destination. */
  addRoute(
    body: OperationBody<'createReceivingRoute'>,
    options?: CallOptions,
  ): Promise<OperationResult<'createReceivingRoute'>>;
  /** `DELETE /inbound/routes/{id}`: the messages it took stay. */
  removeRoute(id: string, options?: CallOptions): Promise<OperationResult<'deleteReceivingRoute'>>;
  /** `GET /inbound/messages`: received messages, newest first. */
  listMessages(
    query?: OperationQuery<'listInboundMessages'>,
    options?: CallOptions,
  ): Promise<OperationResult<'listInboundMessages'>>;
  /** `GET /inbound/messages/{id}`. */
  getMessage(id: string, options?: CallOptions): Promise<OperationResult<'getInboundMessage'>>;
  /** `GET /inbound/settings`: retention, size cap and reply addresses (null: the default). */
  getSettings(options?: CallOptions): Promise<OperationResult<'getReceivingSettings'>>;
  /** `PATCH /inbound/settings`: absent fields kept, null back to the default. */
  updateSettings(
    body: OperationBody<'updateReceivingSettings'>,
    options?: CallOptions,
  ): Promise<OperationResult<'updateReceivingSettings'>>;
}

/** The receiving methods over `api`. */
export function receivingMethods(api: Client<paths>, { init, dataOf }: ClientHelpers): ReceivingMethods {
  const id = (value: string) => ({ path: { id: value } });
  return {
    listRoutes: (call) => dataOf(api.GET('/inbound/routes', init(call))),
    addRoute: (body, call) => dataOf(api.POST('/inbound/routes', { body, ...init(call) })),
    removeRoute: (value, call) =>
      dataOf(api.DELETE('/inbound/routes/{id}', { params: id(value), ...init(call) })),
    listMessages: (query, call) =>
      dataOf(api.GET('/inbound/messages', { ...(query ? { params: { query } } : {}), ...init(call) })),
    getMessage: (value, call) =>
      dataOf(api.GET('/inbound/messages/{id}', { params: id(value), ...init(call) })),
    getSettings: (call) => dataOf(api.GET('/inbound/settings', init(call))),
    updateSettings: (body, call) => dataOf(api.PATCH('/inbound/settings', { body, ...init(call) })),
  };
}
