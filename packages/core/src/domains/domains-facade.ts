import type { AuthContext } from '../context/auth-context.js';
import type {
  AddDomainOptions,
  DomainsOptions,
  DomainView,
  DomainWarning,
  RotateDkimOptions,
} from './domains-options.js';
import type { WarmupOptions } from './warmup-schedule.js';

/** The engine's options of sender domains and their warm-up (`MailroomOptions` extends it). */
export interface DomainsEngineOptions {
  /**
   * Sending domains (docs/domains.md): the policy for mail from domains that are not verified (`warn` by
   * default, or `enforce`), the relay SPF names, the DNS servers the checks ask, the key sealing secret.
   * @example { sending: 'enforce', relay: { addresses: ['203.0.113.7'] } }
   */
  domains?: DomainsOptions;
  /**
   * Warm-up ([README, "Warm-up"]): a daily allowance per sender domain that grows day by day (50, 100,
   * 200, ... by default) until its cap, kept by every worker on the store together; deliveries over the
   * day's allowance wait for the next UTC day, in the order they came. `VALIDATION_FAILED` for a bad
   * schedule. Unset: no warm-up.
   */
  warmup?: WarmupOptions;
}

/** What sender domains add to the engine (`Mailroom` extends it). */
export interface DomainsFacade {
  /**
   * Add a sending domain to the project (`acme.com`; normalised: `Acme.COM.` is `acme.com`, an IDN is
   * punycode; an IP address, a name without a dot and the like are `VALIDATION_FAILED`). A DKIM key pair is
   * made (RSA 2048, or Ed25519 with `keyType`) and its private key stored sealed with the installation
   * secret, never shown. Answers the records to publish; the domain is `pending` until a check finds them.
   * `CONFLICT` if the project has it already.
   */
  addDomain(auth: string | AuthContext, domain: string, options?: AddDomainOptions): Promise<DomainView>;
  /** The project's sending domains, by name, each with its records and the findings of its last check. */
  listDomains(auth: string | AuthContext): Promise<DomainView[]>;
  /** One sending domain of the project; `NOT_FOUND` otherwise. */
  getDomain(auth: string | AuthContext, domain: string): Promise<DomainView>;
  /**
   * Check a domain through DNS now: per record `found`, `missing`, `wrong` (with the exact value expected)
   * or `no-answer` (never verified on no answer). Writes the outcome as the scheduled check does: a key
   * whose record is seen is used for signing, and a verified domain that lost a record emits `domain.failed`.
   */
  verifyDomain(auth: string | AuthContext, domain: string): Promise<DomainView>;
  /**
   * Start a DKIM key rotation: a new key with a new selector, `pending` until its record is seen; then mail
   * is signed with it and the old key stays valid for the grace period (`domains.graceDays`). Answers the
   * records, the new key's included. `UNPROCESSABLE` while no key is in use yet or a rotation is under way.
   */
  rotateDkim(auth: string | AuthContext, domain: string, options?: RotateDkimOptions): Promise<DomainView>;
  /** Remove a sending domain and its keys; `NOT_FOUND` when absent. */
  removeDomain(auth: string | AuthContext, domain: string): Promise<void>;
  /** Unverified domains this process sent from under the `warn` policy (the dashboard shows them). */
  listDomainWarnings(auth: string | AuthContext): Promise<DomainWarning[]>;
  /**
   * Check the domains (of every project) due a scheduled check now, as the running worker does every
   * `domains.checkEveryMs`; returns how many were checked.
   */
  checkDueDomains(): Promise<number>;
}
