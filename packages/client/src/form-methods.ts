import type { Client } from 'openapi-fetch';
import type { CallOptions, OperationBody, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';
import type { ClientHelpers } from './pause-methods.js';

/** Signup forms (issue 38): what a website's form subscribes to, and the consent text it shows. */
export interface FormMethods {
  /** `GET /forms`: the project's signup forms. */
  list(options?: CallOptions): Promise<OperationResult<'listForms'>>;
  /** `POST /forms`: name, group and/or topic, allowed origins, consent text, sender, confirmation template. */
  create(body: OperationBody<'createForm'>, options?: CallOptions): Promise<OperationResult<'createForm'>>;
  /** `GET /forms/{ref}`. */
  get(ref: string, options?: CallOptions): Promise<OperationResult<'getForm'>>;
  /** `PATCH /forms/{ref}`: a new `consentText` is the next version. */
  update(
    ref: string,
    body: OperationBody<'updateForm'>,
    options?: CallOptions,
  ): Promise<OperationResult<'updateForm'>>;
  /** `DELETE /forms/{ref}`: its signups and the consent history stay. */
  remove(ref: string, options?: CallOptions): Promise<OperationResult<'deleteForm'>>;
}

/** The form methods over `api`. */
export function formMethods(api: Client<paths>, { init, dataOf }: ClientHelpers): FormMethods {
  const ref = (value: string) => ({ path: { ref: value } });
  return {
    list: (call) => dataOf(api.GET('/forms', init(call))),
    create: (body, call) => dataOf(api.POST('/forms', { body, ...init(call) })),
    get: (value, call) => dataOf(api.GET('/forms/{ref}', { params: ref(value), ...init(call) })),
    update: (value, body, call) =>
      dataOf(api.PATCH('/forms/{ref}', { params: ref(value), body, ...init(call) })),
    remove: (value, call) => dataOf(api.DELETE('/forms/{ref}', { params: ref(value), ...init(call) })),
  };
}
