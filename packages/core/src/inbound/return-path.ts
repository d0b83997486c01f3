import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import { installationSecret } from '../context/installation-secret.js';
import type { BouncesOptions } from './bounces-options.js';
import { type MailboxUnavailableRule, mailboxUnavailableRule } from './mailbox-unavailable.js';
import { verifyVerpToken, verpAddress, verpTokenOf } from './verp-token.js';

/** The installation setting that holds the generated VERP key when none is configured. */
export const VERP_SECRET_SETTING = 'verp-secret';

/** Secrets shorter than this are refused. */
const MIN_SECRET_LENGTH = 16;

/** The VERP return paths of an engine with the `bounces` option. Internal. */
export interface ReturnPaths {
  /** The bounce domain, lower-cased. */
  readonly domain: string;
  /** Soft bounces in a row after which an address is suppressed. */
  readonly softBounceLimit: number;
  /** When recipient-side soft bounces suppress (`bounces.mailboxUnavailable`). */
  readonly mailboxUnavailable: MailboxUnavailableRule;
  /** The envelope sender of a delivery: `b+<token>@<domain>`. */
  address(deliveryId: string): Promise<string>;
  /**
   * The delivery id named by a return-path address at the bounce domain, when its token's MAC is right;
   * undefined for any other address and for a forged or edited token.
   */
  deliveryOf(address: string): Promise<string | undefined>;
}

/** Return paths signed with `options.secret`, or with a key generated once and kept in the store. */
export function createReturnPaths(ctx: BaseContext, options: BouncesOptions): ReturnPaths {
  const domain = options.domain.trim().toLowerCase();
  if (
    !/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(
      domain,
    )
  ) {
    throw invalid('domain', `bounces.domain is not a domain name: ${options.domain}`);
  }
  if (options.secret !== undefined && options.secret.length < MIN_SECRET_LENGTH) {
    throw invalid('secret', `bounces.secret needs at least ${MIN_SECRET_LENGTH} characters`);
  }
  const softBounceLimit = options.softBounceLimit ?? 3;
  if (!(Number.isSafeInteger(softBounceLimit) && softBounceLimit >= 1)) {
    throw invalid('softBounceLimit', 'bounces.softBounceLimit must be a whole number of at least 1');
  }
  const mailboxUnavailable = mailboxUnavailableRule(options.mailboxUnavailable);
  const getSecret = installationSecret(ctx, VERP_SECRET_SETTING, options.secret);
  return {
    domain,
    softBounceLimit,
    mailboxUnavailable,
    async address(deliveryId) {
      return verpAddress(await getSecret(), deliveryId, domain);
    },
    async deliveryOf(address) {
      const token = verpTokenOf(address, domain);
      if (token === undefined) return undefined;
      return verifyVerpToken(await getSecret(), token);
    },
  };
}

function invalid(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['bounces', field], message }],
  });
}
