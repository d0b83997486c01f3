import type { Client } from 'openapi-fetch';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';
import type { ClientHelpers } from './pause-methods.js';

/** Topics, contacts' topic states and the consent history (issue 38). */
export interface TopicMethods {
  /** `GET /topics`: the project's topics, by key. */
  list(options?: CallOptions): Promise<OperationResult<'listTopics'>>;
  /** `POST /topics`: key, name, description, default `opt-in`/`opt-out`, visibility. */
  create(body: OperationBody<'createTopic'>, options?: CallOptions): Promise<OperationResult<'createTopic'>>;
  /** `GET /topics/{key}`. */
  get(key: string, options?: CallOptions): Promise<OperationResult<'getTopic'>>;
  /** `PATCH /topics/{key}`. */
  update(
    key: string,
    body: OperationBody<'updateTopic'>,
    options?: CallOptions,
  ): Promise<OperationResult<'updateTopic'>>;
  /** `DELETE /topics/{key}`: the contacts' choices for it go; their consent history stays. */
  remove(key: string, options?: CallOptions): Promise<OperationResult<'deleteTopic'>>;
  /** `GET /audience/profiles/{email}/topics`: every topic with the contact's state. */
  ofContact(address: string, options?: CallOptions): Promise<OperationResult<'getContactTopics'>>;
  /** `PUT /audience/profiles/{email}/topics`: `{ news: 'unsubscribed', offers: null }` (null: the default). */
  setForContact(
    address: string,
    topics: OperationBody<'setContactTopics'>['topics'],
    options?: CallOptions,
  ): Promise<OperationResult<'setContactTopics'>>;
  /** `GET /audience/profiles/{email}/consent`: the contact's consent history, oldest first. */
  history(
    address: string,
    query?: OperationQuery<'getConsentHistory'>,
    options?: CallOptions,
  ): Promise<OperationResult<'getConsentHistory'>>;
  /** `GET /project/brand`: the project's name, colour and logo on its contacts' pages. */
  brand(options?: CallOptions): Promise<OperationResult<'getProjectBrand'>>;
  /** `PATCH /project/brand`: `{ color: '#0a7f5a', logo: 'data:image/png;base64,...' }` (null clears). */
  setBrand(
    body: OperationBody<'updateProjectBrand'>,
    options?: CallOptions,
  ): Promise<OperationResult<'updateProjectBrand'>>;
}

/** The topic methods over `api`. */
export function topicMethods(api: Client<paths>, { init, dataOf }: ClientHelpers): TopicMethods {
  const key = (value: string) => ({ path: { key: value } });
  const email = (value: string) => ({ path: { email: value } });
  return {
    list: (call) => dataOf(api.GET('/topics', init(call))),
    create: (body, call) => dataOf(api.POST('/topics', { body, ...init(call) })),
    get: (value, call) => dataOf(api.GET('/topics/{key}', { params: key(value), ...init(call) })),
    update: (value, body, call) =>
      dataOf(api.PATCH('/topics/{key}', { params: key(value), body, ...init(call) })),
    remove: (value, call) => dataOf(api.DELETE('/topics/{key}', { params: key(value), ...init(call) })),
    ofContact: (address, call) =>
      dataOf(api.GET('/audience/profiles/{email}/topics', { params: email(address), ...init(call) })),
    setForContact: (address, topics, call) =>
      dataOf(
        api.PUT('/audience/profiles/{email}/topics', {
          params: email(address),
          body: { topics },
          ...init(call),
        }),
      ),
    history: (address, query, call) =>
      dataOf(
        api.GET('/audience/profiles/{email}/consent', {
          params: { ...email(address), ...(query ? { query } : {}) },
          ...init(call),
        }),
      ),
    brand: (call) => dataOf(api.GET('/project/brand', init(call))),
    setBrand: (body, call) => dataOf(api.PATCH('/project/brand', { body, ...init(call) })),
  };
}
