import type {
  AddDomainOptions,
  AddedWebhookEndpoint,
  AuthContext,
  DomainView,
  MailingView,
  MailroomAudience,
  MailroomKeys,
  MailroomSenders,
  MailroomSuppressions,
  MailroomTemplates,
  MessageStatusView,
  Page,
  RotateDkimOptions,
  TemplateFormat,
  TemplateView,
  WebhookEndpointView,
} from '@mailroom/core';
import type { AutomationOperations } from './automation-operations.js';
import type { FormOperations } from './form-operations.js';
import type { PauseOperations } from './pause-operations.js';
import type { ReceivingOperations } from './receiving-operations.js';
import type { TopicOperations } from './topic-operations.js';

/**
 * The engine's calls of one project without their first argument (the project's auth): what the
 * engine's interface documents for each method holds for both implementations.
 */
export type ForProject<T> = {
  readonly [K in keyof T]: T[K] extends (auth: string | AuthContext, ...rest: infer A) => infer R
    ? (...rest: A) => R
    : never;
};

/**
 * What the admin commands do to one project, wherever it lives: on the database of this machine
 * (`localAdmin`, through the engine) or on a server (`remoteAdmin`, through its HTTP API with a project
 * key). Each command is written once against this; both sides answer the engine's own view types, so
 * that `--json` prints the same either way.
 *
 * Adding a remote command is one method of `remoteAdmin` once its route exists (and the client's types
 * are regenerated); a command without a route runs locally only (`Command.localOnly`).
 */
export interface AdminOperations {
  /** True through a server's HTTP API: what this process's settings would change is the server's. */
  readonly remote: boolean;
  /**
   * How a follow-up command printed for the user reaches the same project: `--project prj_...` on this
   * machine; remotely the URL and the key do (`--url URL --key $MAILROOM_KEY`).
   */
  readonly target: string;
  /** The project's webhook endpoints. */
  readonly webhooks: {
    /** Adds an endpoint; answers its signing secret, once. */
    add(input: { url: string; events?: string[] }): Promise<AddedWebhookEndpoint>;
    /** The endpoints, oldest first, never their secrets. */
    list(): Promise<WebhookEndpointView[]>;
    /** Removes an endpoint; `NOT_FOUND` when the project has none with this id. */
    remove(id: string): Promise<void>;
    /** Enables or disables an endpoint. */
    setEnabled(id: string, enabled: boolean): Promise<WebhookEndpointView>;
  };
  /** The project's sending domains. */
  readonly domains: {
    /** Adds a domain (a DKIM key is made); `name` is normalised. */
    add(name: string, options: AddDomainOptions): Promise<DomainView>;
    /** The domains. */
    list(): Promise<DomainView[]>;
    /** One domain; `NOT_FOUND` otherwise. */
    get(name: string): Promise<DomainView>;
    /** Checks the domain through DNS now (where the engine runs) and keeps the outcome. */
    verify(name: string): Promise<DomainView>;
    /** Starts a DKIM key rotation. */
    rotateDkim(name: string, options: RotateDkimOptions): Promise<DomainView>;
  };
  /** Pause and resume of broadcasts, the project's sending and destinations (pause-operations.ts). */
  readonly pauses: PauseOperations;
  /** Topics, contacts' topic states and the consent history (topic-operations.ts). */
  readonly topics: TopicOperations;
  /** Tracked events, workflows and their runs (automation-operations.ts). */
  readonly automations: AutomationOperations;
  /** Receiving routes and the messages they took (receiving-operations.ts). */
  readonly receiving: ReceivingOperations;
  /** Signup forms (form-operations.ts). */
  readonly forms: FormOperations;
  /** A broadcast or message with its delivery counts. */
  getMailing(ref: string): Promise<MailingView>;
  /** The project's broadcasts, newest first, with their counts; `after` is the `next` of a page. */
  listBroadcasts(page: { after?: string; limit?: number }): Promise<Page<MailingView>>;
  /** A message by its ref, or one recipient of any mailing by its Message-ID, with each recipient's status. */
  getMessage(ref: string): Promise<MessageStatusView>;
  /** The project's sender identities. */
  readonly senders: ForProject<MailroomSenders>;
  /** The project's suppression list. */
  readonly suppressions: ForProject<MailroomSuppressions>;
  /** The project's API keys. */
  readonly keys: ForProject<MailroomKeys>;
  /** The project's audience: groups, profiles, CSV imports. */
  readonly audience: ForProject<
    Pick<
      MailroomAudience,
      | 'listGroups'
      | 'createGroup'
      | 'listMembers'
      | 'listProfiles'
      | 'getProfile'
      | 'startImport'
      | 'getImport'
    >
  >;
  /** The project's templates (reads). */
  readonly templates: ForProject<Pick<MailroomTemplates, 'list' | 'get' | 'preview'>>;
  /**
   * Stores a template: version 1, or the next version when `ref` exists. `sourceName` names the file in
   * the errors of a check made on this machine.
   */
  storeTemplate(input: {
    ref: string;
    format: TemplateFormat;
    source: string;
    subject?: string;
    sourceName?: string;
  }): Promise<TemplateView>;
}
