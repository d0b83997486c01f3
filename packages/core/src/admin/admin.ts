import { createPrivateKey } from 'node:crypto';
import { hashedAddress } from '../base/address-hash.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { changeConsent } from '../consent/consent-change.js';
import type { BaseContext } from '../context/base-context.js';
import { newKey } from '../keys/new-key.js';
import { assertLiquidSyntax, compileTemplate } from '../render/index.js';
import { normalizeAddress } from '../request/index.js';
import { MAX_TEMPLATE_SOURCE_BYTES, REF_PATTERN } from '../resources/resource-schemas.js';
import { writeTemplateVersion } from '../resources/template-versions.js';
import type { TemplateFormat } from '../store/records.js';
import type { MailroomAdmin } from './admin-types.js';

const FORMATS: readonly TemplateFormat[] = ['html', 'mjml', 'text'];

/** The admin operations: no project secret involved; the embedding app or the CLI calls them. */
export function createAdmin(ctx: BaseContext): MailroomAdmin {
  const { store, clock } = ctx;

  async function requireProject(projectId: string): Promise<void> {
    await ctx.ready();
    if (!(await store.getProject(projectId)))
      throw new MailroomError('NOT_FOUND', `Project ${projectId} not found`);
  }

  return {
    async createProject({ name, sandbox }) {
      await ctx.ready();
      if (!name?.trim()) throw invalid(['name'], 'A project needs a name');
      const now = clock.now();
      const project = { id: newId('prj', now.getTime()), name: name.trim(), createdAt: now };
      const mode = sandbox ? 'sandbox' : 'live';
      // The project's secret is its first key, with every right.
      const { key, secret } = newKey(project.id, { scope: 'full', domains: [], mode }, now);
      await store.createProject(project, key);
      return { project, secret };
    },

    async createSecret(projectId, mode = 'live') {
      await requireProject(projectId);
      const { key, secret } = newKey(projectId, { scope: 'full', domains: [], mode }, clock.now());
      await store.addProjectSecret(key);
      return secret;
    },

    async addSender(projectId, { address, name, dkim }) {
      await requireProject(projectId);
      if (dkim) checkDkim(dkim);
      const now = clock.now();
      const sender = {
        id: newId('snd', now.getTime()),
        projectId,
        address: normalizeAddress(address),
        name: name?.trim() || null,
        dkim: dkim ?? null,
        createdAt: now,
      };
      await store.addSender(sender);
      return sender;
    },

    async createTemplate(projectId, { ref, format, source, subject, sourceName }) {
      await requireProject(projectId);
      if (!REF_PATTERN.test(ref))
        throw invalid(['ref'], 'A ref is 1-128 characters of letters, digits and ._:-');
      if (!FORMATS.includes(format)) throw invalid(['format'], `Format must be one of ${FORMATS.join(', ')}`);
      if (Buffer.byteLength(source, 'utf8') > MAX_TEMPLATE_SOURCE_BYTES) {
        throw invalid(['source'], `A template source is at most ${MAX_TEMPLATE_SOURCE_BYTES} bytes (1 MiB)`);
      }
      const { compiled } = await compileTemplate(format, source, sourceName ?? `template ${ref}`);
      if (subject) assertLiquidSyntax(subject, sourceName ? 'subject' : `subject of template ${ref}`);
      const content = { ref, format, subject: subject ?? null, source, compiled };
      return writeTemplateVersion(ctx, projectId, content, 'upsert');
    },

    async createAudienceGroup(projectId, { ref, name, doubleOptIn }) {
      await requireProject(projectId);
      if (!REF_PATTERN.test(ref))
        throw invalid(['ref'], 'A ref is 1-128 characters of letters, digits and ._:-');
      const now = clock.now();
      const group = {
        id: newId('grp', now.getTime()),
        projectId,
        ref,
        name: name ?? null,
        ...(doubleOptIn ? { doubleOptIn: true } : {}),
        createdAt: now,
      };
      await store.createGroup(group);
      return group;
    },

    async setSubscription(projectId, address, status) {
      await requireProject(projectId);
      // An unsubscribe through the admin API is an unsubscribe: announced like a link's, in the change's
      // transaction, and kept in the consent history; setting the status it already has changes nothing.
      await changeConsent(ctx, { projectId, address: normalizeAddress(address), status, source: 'api' });
    },

    async suppress(projectId, address, reason, detail) {
      await requireProject(projectId);
      await store.addSuppression({
        projectId,
        address: normalizeAddress(address),
        reason,
        detail: detail ?? null,
        createdAt: clock.now(),
      });
    },

    async unsuppress(projectId, address) {
      await ctx.ready();
      const normalized = normalizeAddress(address);
      // Also the hash an erasure kept of the address (see `suppressions.lift`).
      const [lifted, forgotten] = await Promise.all([
        store.removeSuppression(projectId, normalized),
        store.forgetErasedAddress(projectId, hashedAddress(projectId, normalized)),
      ]);
      return lifted || forgotten;
    },
  };
}

function invalid(path: string[], message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, { issues: [{ code: 'custom', path, message }] });
}

const SELECTOR =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

// A broken key must fail here, once, not on every delivery later.
function checkDkim(dkim: { selector: string; privateKey: string }): void {
  if (!SELECTOR.test(dkim.selector)) throw invalid(['dkim', 'selector'], 'A DKIM selector is a DNS label');
  let type: string | undefined;
  try {
    type = createPrivateKey(dkim.privateKey).asymmetricKeyType;
  } catch (error) {
    throw new MailroomError('VALIDATION_FAILED', 'The DKIM private key is not a valid PEM key', {
      cause: error,
      issues: [{ code: 'custom', path: ['dkim', 'privateKey'], message: 'Not a valid PEM private key' }],
    });
  }
  if (type !== 'rsa' && type !== 'ed25519') {
    throw invalid(['dkim', 'privateKey'], `DKIM keys must be RSA or Ed25519, not ${type}`);
  }
}
