import type { MailroomClient, Schemas } from '@mailroom/client';
import type {
  AuthContext,
  ConsentHistoryPage,
  ContactTopicView,
  Mailroom,
  ProjectBrandPatch,
  ProjectBrandView,
  TopicInput,
  TopicPatch,
  TopicState,
  TopicView,
} from '@mailroom/core';

/**
 * Topics and consent of one project (issue 38), on this machine's database or through a server's API
 * (`AdminOperations` `topics`). Answers are the engine's views either way.
 */
export interface TopicOperations {
  list(): Promise<TopicView[]>;
  create(input: TopicInput): Promise<TopicView>;
  update(key: string, patch: TopicPatch): Promise<TopicView>;
  remove(key: string): Promise<void>;
  /** Every topic with the contact's state. */
  ofContact(address: string): Promise<ContactTopicView[]>;
  /** Sets (null: clears) a contact's states; a consent change of source `api`. */
  setForContact(address: string, topics: Record<string, TopicState | null>): Promise<ContactTopicView[]>;
  /** The contact's consent history, oldest first. */
  history(address: string, page: { after?: string; limit?: number }): Promise<ConsentHistoryPage>;
  /** The project's name, colour and logo on its contacts' pages (the preference centre). */
  brand(): Promise<ProjectBrandView>;
  /** Set (null: clear) the colour and logo. */
  setBrand(patch: ProjectBrandPatch): Promise<ProjectBrandView>;
}

/** The engine's own calls for the project of `auth`. */
export function localTopics(mailroom: Mailroom, auth: AuthContext): TopicOperations {
  return {
    list: () => mailroom.topics.list(auth),
    create: (input) => mailroom.topics.create(auth, input),
    update: (key, patch) => mailroom.topics.update(auth, key, patch),
    remove: (key) => mailroom.topics.remove(auth, key),
    ofContact: (address) => mailroom.topics.contactTopics(auth, address),
    setForContact: (address, topics) => mailroom.topics.setContactTopics(auth, address, topics),
    history: (address, page) => mailroom.topics.history(auth, address, page),
    brand: () => mailroom.brand.get(auth),
    setBrand: (patch) => mailroom.brand.update(auth, patch),
  };
}

/** The same through the API (`call` turns the server's refusals into the engine's errors). */
export function remoteTopics(
  client: MailroomClient,
  call: <T>(work: () => Promise<T>) => Promise<T>,
): TopicOperations {
  return {
    list: () => call(async () => (await client.topics.list()).topics.map(topicView)),
    create: (input) => call(async () => topicView((await client.topics.create(input)).topic)),
    update: (key, patch) => call(async () => topicView((await client.topics.update(key, patch)).topic)),
    remove: (key) =>
      call(async () => {
        await client.topics.remove(key);
      }),
    ofContact: (address) => call(async () => (await client.topics.ofContact(address)).topics),
    setForContact: (address, topics) =>
      // `pending` is the state of a form signup, never one to set: the engine refuses it.
      call(
        async () =>
          (
            await client.topics.setForContact(
              address,
              topics as Record<string, 'subscribed' | 'unsubscribed' | null>,
            )
          ).topics,
      ),
    history: (address, page) =>
      call(async () => {
        const answer = await client.topics.history(address, {
          ...(page.after ? { cursor: page.after } : {}),
          ...(page.limit ? { limit: page.limit } : {}),
        });
        return {
          data: answer.consent.map((r) => ({ ...r, at: new Date(r.at) })),
          next: answer.nextCursor ?? null,
        };
      }),
    brand: () => call(async () => (await client.topics.brand()).brand),
    setBrand: (patch) => call(async () => (await client.topics.setBrand(patch)).brand),
  };
}

/** A topic of the API's answer as the engine's view: its times as Dates again. */
function topicView(wire: Schemas['Topic']): TopicView {
  return {
    ...wire,
    description: wire.description ?? null,
    createdAt: new Date(wire.createdAt),
    updatedAt: new Date(wire.updatedAt),
  };
}
