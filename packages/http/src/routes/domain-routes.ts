import type { AddDomainOptions, DkimAlgorithm, RotateDkimOptions } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import { stringField } from './body-fields.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with the project secret. */
export type DomainRouteName = Extract<RouteName, 'domains' | 'domain' | 'domain-verify' | 'domain-rotate'>;

/**
 * `GET/POST /domains` (list, add), `GET/DELETE /domains/:name`, `POST /domains/:name/verify` and
 * `POST /domains/:name/rotate-dkim`. A domain's private key never appears in an answer.
 */
export const DOMAIN_ROUTES = {
  async domains({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Sending domains', { domains: await mailroom.listDomains(auth) });
    }
    const body = objectBody(readJson(), 'The body must be an object with `domain` and optional settings');
    const domain = stringField(body, 'domain', true) as string;
    const keyType = stringField(body, 'keyType');
    const options: AddDomainOptions = {};
    for (const field of ['selector', 'returnPath', 'returnPathMx', 'dmarcReports'] as const) {
      const value = stringField(body, field);
      if (value !== undefined) options[field] = value;
    }
    if (keyType !== undefined) options.keyType = keyType as DkimAlgorithm;
    const added = await mailroom.addDomain(auth, domain, options);
    return successResponse(requestId, 'Domain added: publish its records, then verify it', {
      domain: added,
    });
  },

  async domain({ mailroom, auth, req, requestId, params }) {
    const name = params.name ?? '';
    if (req.method === 'DELETE') {
      await mailroom.removeDomain(auth, name);
      return successResponse(requestId, 'Domain removed', { domain: name });
    }
    return successResponse(requestId, 'Sending domain', { domain: await mailroom.getDomain(auth, name) });
  },

  async 'domain-verify'({ mailroom, auth, requestId, params }) {
    const checked = await mailroom.verifyDomain(auth, params.name ?? '');
    const message =
      checked.check === 'verified'
        ? 'Domain verified'
        : checked.check === 'no-answer'
          ? 'DNS did not answer: not verified, try again'
          : 'Domain not verified: see the findings';
    return successResponse(requestId, message, { domain: checked });
  },

  async 'domain-rotate'({ mailroom, auth, req, requestId, params, readJson }) {
    // The body is optional: an empty one makes a key like the current one.
    const body =
      (req.body?.byteLength ?? 0) === 0 ? {} : objectBody(readJson(), 'The body must be an object');
    const options: RotateDkimOptions = {};
    const selector = stringField(body, 'selector');
    const keyType = stringField(body, 'keyType');
    if (selector !== undefined) options.selector = selector;
    if (keyType !== undefined) options.keyType = keyType as DkimAlgorithm;
    const rotated = await mailroom.rotateDkim(auth, params.name ?? '', options);
    return successResponse(requestId, 'New DKIM key made: publish its record, then verify the domain', {
      domain: rotated,
    });
  },
} satisfies Record<DomainRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

function objectBody(body: unknown, message: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MailroomError('VALIDATION_FAILED', message);
  }
  return body as Record<string, unknown>;
}
