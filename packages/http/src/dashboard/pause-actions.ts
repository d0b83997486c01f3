import type { AuthContext, Logger, Mailroom, PauseView } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { mailingUrl } from './urls.js';

/** What a pause form does: the engine's call, then where the browser goes next (`?done=` says what happened). */
export interface PauseActions {
  /** The notice of `?done=` on the Pauses page or a broadcast's page. */
  notice(done: string | null): string | undefined;
  /** The project's pauses in force. */
  list(auth: AuthContext): Promise<PauseView[]>;
  /** `POST /pauses/{sending|destination}/{pause|resume}`: the path to go to next (under the dashboard root). */
  project(
    auth: AuthContext,
    what: string,
    verb: string,
    form: URLSearchParams,
    root: string,
  ): Promise<string>;
  /** `POST /broadcasts/:ref/{pause|resume}`: back to the broadcast (or to the Pauses page, `back=pauses`). */
  broadcast(
    auth: AuthContext,
    ref: string,
    verb: string,
    form: URLSearchParams,
    root: string,
  ): Promise<string>;
}

const NOTICES: Readonly<Record<string, string>> = {
  'sending-pause': 'Sending paused: no delivery of the project is sent until it is resumed.',
  'sending-resume': 'Sending resumed.',
  'destination-pause': 'Destination paused.',
  'destination-resume': 'Destination resumed.',
  'broadcast-pause': 'Broadcast paused: deliveries in flight finish, no other is sent.',
  'broadcast-resume': 'Broadcast resumed where it stopped.',
};

/** The dashboard's pause and resume forms over the engine's calls (the rules are the engine's). */
export function createPauseActions(mailroom: Mailroom, logger: Logger): PauseActions {
  const logged = (auth: AuthContext, action: string, target: string) =>
    logger.info({ projectId: auth.project.id, action, target }, 'mailroom dashboard: pause changed');
  return {
    notice: (done) => (done ? NOTICES[done] : undefined),
    list: (auth) => mailroom.listPauses(auth),
    async project(auth, what, verb, form, root) {
      const reason = nonEmpty(form.get('reason'));
      if (what === 'sending' && verb === 'pause') {
        await mailroom.pauseSending(auth, reason ? { reason } : {});
      } else if (what === 'sending' && verb === 'resume') {
        await mailroom.resumeSending(auth);
      } else if (what === 'destination' && verb === 'pause') {
        const minutes = nonEmpty(form.get('minutes'));
        const domains = nonEmpty(form.get('domains'))
          ?.split(/[\s,]+/)
          .filter((d) => d !== '');
        await mailroom.pauseDestination(auth, form.get('name') ?? '', {
          ...(reason ? { reason } : {}),
          // The engine refuses anything but whole minutes in range: a typed "1.5" or "abc" is its 400.
          ...(minutes ? { minutes: Number(minutes) } : {}),
          ...(domains && domains.length > 0 ? { domains } : {}),
        });
      } else if (what === 'destination' && verb === 'resume') {
        await mailroom.resumeDestination(auth, form.get('name') ?? '');
      } else {
        throw new MailroomError('NOT_FOUND', 'No such page');
      }
      logged(auth, `${what}-${verb}`, what === 'destination' ? (form.get('name') ?? '') : auth.project.id);
      return `${root}/pauses?done=${what}-${verb}`;
    },
    async broadcast(auth, ref, verb, form, root) {
      if (verb === 'pause') {
        const reason = nonEmpty(form.get('reason'));
        await mailroom.pauseBroadcast(auth, ref, reason ? { reason } : {});
      } else {
        await mailroom.resumeBroadcast(auth, ref);
      }
      logged(auth, `broadcast-${verb}`, ref);
      const back = form.get('back') === 'pauses' ? `${root}/pauses` : mailingUrl(root, 'broadcast', ref);
      return `${back}?done=broadcast-${verb}`;
    },
  };
}

function nonEmpty(value: string | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
