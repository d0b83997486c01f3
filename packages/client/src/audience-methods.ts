import type { Client } from 'openapi-fetch';
import { dataOf, init, pathOf } from './call-envelope.js';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';

/** The client's methods for the audience and the status reads of broadcasts and messages. */
export interface AudienceMethods {
  /** The project's audience: groups, profiles, CSV imports (`/audience/...`). */
  readonly audience: {
    /** `GET /audience/groups`: by ref, with member counts. */
    listGroups(options?: CallOptions): Promise<OperationResult<'listAudienceGroups'>>;
    /** `POST /audience/groups`: `CONFLICT` for a ref in use. */
    createGroup(
      body: OperationBody<'createAudienceGroup'>,
      options?: CallOptions,
    ): Promise<OperationResult<'createAudienceGroup'>>;
    /** `DELETE /audience/groups/{group}`: the group and its memberships; the profiles stay. */
    deleteGroup(ref: string, options?: CallOptions): Promise<OperationResult<'deleteAudienceGroup'>>;
    /** `GET /audience/groups/{group}/members`: a page of its profiles by address. */
    listMembers(
      ref: string,
      query?: OperationQuery<'listAudienceGroupMembers'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listAudienceGroupMembers'>>;
    /** `GET /audience/profiles`: a page by address; `q` searches by address prefix, `label` by label. */
    listProfiles(
      query?: OperationQuery<'listProfiles'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listProfiles'>>;
    /** `GET /audience/profiles/{email}`: with its suppression. */
    getProfile(address: string, options?: CallOptions): Promise<OperationResult<'getProfile'>>;
    /** `PATCH /audience/profiles/{email}`: absent fields are kept; `traits` merge (null removes a key). */
    updateProfile(
      address: string,
      body: OperationBody<'updateProfile'>,
      options?: CallOptions,
    ): Promise<OperationResult<'updateProfile'>>;
    /** `DELETE /audience/profiles/{email}`: erases the address and its personal data from the project. */
    eraseProfile(address: string, options?: CallOptions): Promise<OperationResult<'eraseProfile'>>;
    /** `POST /audience/imports`: starts a CSV import into a group (the file is read by byte ranges). */
    startImport(
      body: OperationBody<'startAudienceImport'>,
      options?: CallOptions,
    ): Promise<OperationResult<'startAudienceImport'>>;
    /** `GET /audience/imports/{id}`: an import's progress (rows read, profiles added, row errors). */
    getImport(id: string, options?: CallOptions): Promise<OperationResult<'getAudienceImport'>>;
  };
  /** The project's broadcasts (`/broadcasts`; cancel and reschedule are `cancelBroadcast`, `rescheduleBroadcast`). */
  readonly broadcasts: {
    /** `GET /broadcasts`: newest first, each with its counts. */
    list(
      query?: OperationQuery<'listBroadcasts'>,
      options?: CallOptions,
    ): Promise<OperationResult<'listBroadcasts'>>;
    /** `GET /broadcasts/{ref}`: status, counts and source jobs. */
    get(ref: string, options?: CallOptions): Promise<OperationResult<'getBroadcast'>>;
  };
  /** Single messages (`/messages`). */
  readonly messages: {
    /**
     * `GET /messages/{ref}`: a message by the `ref` `send` answered, or one recipient of any mailing by
     * its RFC Message-ID (`<...@...>`), with each recipient's status, attempts and events.
     */
    get(refOrMessageId: string, options?: CallOptions): Promise<OperationResult<'getMessage'>>;
  };
}

/** The {@link AudienceMethods} over `api`. */
export function audienceMethods(api: Client<paths>): AudienceMethods {
  const group = (ref: string) => pathOf('group', ref);
  const email = (address: string) => pathOf('email', address);
  return {
    audience: {
      listGroups: (call) => dataOf(api.GET('/audience/groups', init(call))),
      createGroup: (body, call) => dataOf(api.POST('/audience/groups', { body, ...init(call) })),
      deleteGroup: (ref, call) =>
        dataOf(api.DELETE('/audience/groups/{group}', { params: group(ref), ...init(call) })),
      listMembers: (ref, query, call) =>
        dataOf(
          api.GET('/audience/groups/{group}/members', { params: { ...group(ref), query }, ...init(call) }),
        ),
      listProfiles: (query, call) =>
        dataOf(api.GET('/audience/profiles', { params: { query }, ...init(call) })),
      getProfile: (address, call) =>
        dataOf(api.GET('/audience/profiles/{email}', { params: email(address), ...init(call) })),
      updateProfile: (address, body, call) =>
        dataOf(api.PATCH('/audience/profiles/{email}', { params: email(address), body, ...init(call) })),
      eraseProfile: (address, call) =>
        dataOf(api.DELETE('/audience/profiles/{email}', { params: email(address), ...init(call) })),
      startImport: (body, call) => dataOf(api.POST('/audience/imports', { body, ...init(call) })),
      getImport: (id, call) =>
        dataOf(api.GET('/audience/imports/{id}', { params: pathOf('id', id), ...init(call) })),
    },
    broadcasts: {
      list: (query, call) => dataOf(api.GET('/broadcasts', { params: { query }, ...init(call) })),
      get: (ref, call) => dataOf(api.GET('/broadcasts/{ref}', { params: pathOf('ref', ref), ...init(call) })),
    },
    messages: {
      get: (ref, call) => dataOf(api.GET('/messages/{ref}', { params: pathOf('ref', ref), ...init(call) })),
    },
  };
}
