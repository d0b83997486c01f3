import type { AuthContext } from '@mailroom/core';
import type { NeutralResponse } from '../../neutral/types.js';
import {
  type AreaDeps,
  type AreaRoutes,
  allowed,
  type Call,
  ctxOf,
  GET,
  POST,
  page,
} from '../dashboard-call.js';
import { queryOf, redirect } from '../dashboard-http.js';
import { domainsPage } from '../pages/domains-page.js';
import { keysPage } from '../pages/keys-page.js';

/** The project's settings: its API keys (and the form that revokes one), its sender domains (and their check). */
export function createSettingsRoutes({ mailroom, logger }: AreaDeps): AreaRoutes {
  async function keys(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const notice =
      queryOf(call.req).get('done') === 'revoke' ? 'Key revoked: it answers 401 from now on.' : undefined;
    return page(
      call,
      200,
      keysPage(ctxOf(call), {
        keys: await mailroom.keys.list(auth),
        currentKeyId: auth.key?.id,
        ...(notice ? { notice } : {}),
      }),
    );
  }

  async function keyRevoke(call: Call, auth: AuthContext, id: string): Promise<NeutralResponse> {
    await mailroom.keys.revoke(auth, id);
    logger.info({ projectId: auth.project.id, keyId: id }, 'mailroom dashboard: key revoked');
    return redirect(call.requestId, `${call.root}/keys?done=revoke`);
  }

  async function domains(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const [list, warnings] = await Promise.all([
      mailroom.listDomains(auth),
      mailroom.listDomainWarnings(auth),
    ]);
    const checked = queryOf(call.req).get('checked');
    const notice = checked ? `Checked ${checked}.` : undefined;
    return page(
      call,
      200,
      domainsPage(ctxOf(call), { domains: list, warnings, ...(notice ? { notice } : {}) }),
    );
  }

  async function domainVerify(call: Call, auth: AuthContext, name: string): Promise<NeutralResponse> {
    const checked = await mailroom.verifyDomain(auth, name);
    return redirect(call.requestId, `${call.root}/domains?checked=${encodeURIComponent(checked.domain)}`);
  }

  return new Map([
    [
      'keys',
      (call, auth) => {
        const [, id = '', action] = call.segments;
        if (call.segments.length === 1) return allowed(call, GET, () => keys(call, auth));
        if (call.segments.length === 3 && action === 'revoke')
          return allowed(call, POST, () => keyRevoke(call, auth, id));
        return undefined;
      },
    ],
    [
      'domains',
      (call, auth) => {
        const [, name = '', action] = call.segments;
        if (call.segments.length === 1) return allowed(call, GET, () => domains(call, auth));
        if (call.segments.length === 3 && action === 'verify')
          return allowed(call, POST, () => domainVerify(call, auth, name));
        return undefined;
      },
    ],
  ]);
}
