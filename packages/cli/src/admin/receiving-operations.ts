import type { MailroomClient } from '@mailroom/client';
import type {
  AuthContext,
  InboundMail,
  Mailroom,
  ReceivingRouteInput,
  ReceivingRouteView,
  ReceivingSettingsInput,
  ReceivingSettingsView,
} from '@mailroom/core';

/**
 * Receiving routes and the messages they took, of one project (issue 40), on this machine's database or
 * through a server's API (`AdminOperations` `receiving`). Both answer the engine's views (`InboundMail`
 * and `ReceivingRouteView` are JSON-shaped already: the API's answer is the same object).
 */
export interface ReceivingOperations {
  listRoutes(): Promise<ReceivingRouteView[]>;
  addRoute(input: ReceivingRouteInput): Promise<ReceivingRouteView>;
  removeRoute(id: string): Promise<void>;
  listMessages(page: {
    before?: string;
    limit?: number;
  }): Promise<{ items: InboundMail[]; next: string | null }>;
  getMessage(id: string): Promise<InboundMail>;
  /** The project's receiving settings (null: the engine's default). */
  getSettings(): Promise<ReceivingSettingsView>;
  /** Changes them: absent fields kept, null ones back to the default. */
  updateSettings(input: ReceivingSettingsInput): Promise<ReceivingSettingsView>;
}

/** The engine's own calls for the project of `auth`. */
export function localReceiving(mailroom: Mailroom, auth: AuthContext): ReceivingOperations {
  const r = mailroom.receiving;
  return {
    listRoutes: () => r.listRoutes(auth),
    addRoute: (input) => r.addRoute(auth, input),
    removeRoute: (id) => r.removeRoute(auth, id),
    listMessages: (page) => r.listMessages(auth, page),
    getMessage: (id) => r.getMessage(auth, id),
    getSettings: () => r.getSettings(auth),
    updateSettings: (input) => r.updateSettings(auth, input),
  };
}

/** The same through the API (`call` turns the server's refusals into the engine's errors). */
export function remoteReceiving(
  client: MailroomClient,
  call: <T>(work: () => Promise<T>) => Promise<T>,
): ReceivingOperations {
  const c = client.receiving;
  return {
    listRoutes: () => call(async () => (await c.listRoutes()).routes as ReceivingRouteView[]),
    addRoute: (input) => call(async () => (await c.addRoute(input)).route as ReceivingRouteView),
    removeRoute: (id) =>
      call(async () => {
        await c.removeRoute(id);
      }),
    listMessages: (page) =>
      call(async () => {
        const answer = await c.listMessages({
          ...(page.before ? { before: page.before } : {}),
          ...(page.limit ? { limit: page.limit } : {}),
        });
        return { items: answer.messages as unknown as InboundMail[], next: answer.nextCursor };
      }),
    getMessage: (id) => call(async () => (await c.getMessage(id)).message as unknown as InboundMail),
    getSettings: () => call(async () => (await c.getSettings()).settings as unknown as ReceivingSettingsView),
    updateSettings: (input) =>
      call(async () => (await c.updateSettings(input)).settings as unknown as ReceivingSettingsView),
  };
}
