import type { MailroomClient, Schemas } from '@mailroom/client';
import type { AuthContext, FormInput, FormPatch, FormView, Mailroom } from '@mailroom/core';

/**
 * Signup forms of one project (issue 38), on this machine's database or through a server's API
 * (`AdminOperations` `forms`). Answers are the engine's views either way.
 */
export interface FormOperations {
  list(): Promise<FormView[]>;
  create(input: FormInput): Promise<FormView>;
  get(ref: string): Promise<FormView>;
  update(ref: string, patch: FormPatch): Promise<FormView>;
  remove(ref: string): Promise<void>;
}

/** The engine's own calls for the project of `auth`. */
export function localForms(mailroom: Mailroom, auth: AuthContext): FormOperations {
  return {
    list: () => mailroom.forms.list(auth),
    create: (input) => mailroom.forms.create(auth, input),
    get: (ref) => mailroom.forms.get(auth, ref),
    update: (ref, patch) => mailroom.forms.update(auth, ref, patch),
    remove: (ref) => mailroom.forms.remove(auth, ref),
  };
}

/** The same through the API (`call` turns the server's refusals into the engine's errors). */
export function remoteForms(
  client: MailroomClient,
  call: <T>(work: () => Promise<T>) => Promise<T>,
): FormOperations {
  return {
    list: () => call(async () => (await client.forms.list()).forms.map(formView)),
    create: (input) => call(async () => formView((await client.forms.create(input)).form)),
    get: (ref) => call(async () => formView((await client.forms.get(ref)).form)),
    update: (ref, patch) => call(async () => formView((await client.forms.update(ref, patch)).form)),
    remove: (ref) =>
      call(async () => {
        await client.forms.remove(ref);
      }),
  };
}

/** A form of the API's answer as the engine's view: its times as Dates again. */
function formView(wire: Schemas['Form']): FormView {
  return {
    ...wire,
    group: wire.group ?? null,
    topic: wire.topic ?? null,
    confirmTemplate: wire.confirmTemplate ?? null,
    consentTexts: wire.consentTexts.map((t) => ({ ...t, createdAt: new Date(t.createdAt) })),
    createdAt: new Date(wire.createdAt),
    updatedAt: new Date(wire.updatedAt),
  };
}
