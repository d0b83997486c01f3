import type { MailroomClient, Schemas } from '@mailroom/client';
import type { AuthContext, Mailroom, PauseView } from '@mailroom/core';

/** What an operator gives with a pause: why, and (destinations) for how long and over which domains. */
export interface PauseInput {
  reason?: string;
  minutes?: number;
  domains?: string[];
}

/**
 * Pause and resume of one project, on this machine's database or through a server's API (`AdminOperations`
 * `pauses`). Every call answers the pauses in force after it, as the engine's `PauseView`s.
 */
export interface PauseOperations {
  /** The pauses in force, oldest first. */
  list(): Promise<PauseView[]>;
  /** Pauses a broadcast; `BROADCAST_CLOSED` when it was cancelled or failed. */
  pauseBroadcast(ref: string, input: PauseInput): Promise<PauseView[]>;
  /** Resumes a broadcast where it stopped. */
  resumeBroadcast(ref: string): Promise<PauseView[]>;
  /** Pauses the project's whole sending. */
  pauseSending(input: PauseInput): Promise<PauseView[]>;
  /** Resumes the project's sending. */
  resumeSending(): Promise<PauseView[]>;
  /** Pauses a destination (a recipient domain, or a group of `domains`), for `minutes` or until resumed. */
  pauseDestination(name: string, input: PauseInput): Promise<PauseView[]>;
  /** Resumes a destination. */
  resumeDestination(name: string): Promise<PauseView[]>;
}

/** The engine's own calls for the project of `auth`. */
export function localPauses(mailroom: Mailroom, auth: AuthContext): PauseOperations {
  return {
    list: () => mailroom.listPauses(auth),
    pauseBroadcast: (ref, input) => mailroom.pauseBroadcast(auth, ref, input),
    resumeBroadcast: (ref) => mailroom.resumeBroadcast(auth, ref),
    pauseSending: (input) => mailroom.pauseSending(auth, input),
    resumeSending: () => mailroom.resumeSending(auth),
    pauseDestination: (name, input) => mailroom.pauseDestination(auth, name, input),
    resumeDestination: (name) => mailroom.resumeDestination(auth, name),
  };
}

/** The same through the API (`call` turns the server's refusals into the engine's errors). */
export function remotePauses(
  client: MailroomClient,
  call: <T>(work: () => Promise<T>) => Promise<T>,
): PauseOperations {
  const views = async (answer: Promise<{ pauses: Schemas['Pause'][] }>) =>
    (await answer).pauses.map(pauseView);
  return {
    list: () => call(() => views(client.pauses.list())),
    pauseBroadcast: (ref, input) => call(() => views(client.pauses.pauseBroadcast(ref, reasonOf(input)))),
    resumeBroadcast: (ref) => call(() => views(client.pauses.resumeBroadcast(ref))),
    pauseSending: (input) => call(() => views(client.pauses.pauseSending(reasonOf(input)))),
    resumeSending: () => call(() => views(client.pauses.resumeSending())),
    pauseDestination: (name, input) => call(() => views(client.pauses.pauseDestination(name, input))),
    resumeDestination: (name) => call(() => views(client.pauses.resumeDestination(name))),
  };
}

/** A pause of the API's answer as the engine's view: the same fields, its times as Dates again. */
function pauseView(wire: Schemas['Pause']): PauseView {
  return {
    ...wire,
    reason: wire.reason ?? null,
    rule: wire.rule ?? null,
    createdAt: new Date(wire.createdAt),
    until: wire.until === null || wire.until === undefined ? null : new Date(wire.until),
  };
}

function reasonOf(input: PauseInput): { reason?: string } {
  return input.reason === undefined ? {} : { reason: input.reason };
}
