/**
 * Attachment URLs of received messages: signed (attachment-token.ts), expiring, served by the HTTP
 * adapter at `<receiving.baseUrl>/inbound/attachments/<token>` without a key, from the raw message the
 * store keeps.
 */
import { publicBaseUrl } from '../base/base-url.js';
import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import { installationSecret } from '../context/installation-secret.js';
import { signAttachmentToken, verifyAttachmentToken } from './attachment-token.js';
import { attachmentOf } from './parse-received.js';
import { ATTACHMENT_URL_TTL_DEFAULT, type ReceivingOptions } from './receiving-options.js';
import type { InboundAttachment, InboundAttachmentContent } from './receiving-types.js';

/** The setting the generated attachment key is kept under. */
const SECRET_SETTING = 'receiving_attachment_secret';
const HOUR = 3_600_000;

/** Signing and serving attachment URLs. Internal. */
export interface AttachmentUrls {
  /** `attachments` with URLs valid from `from` for the TTL (unchanged without a base URL). */
  sign(
    projectId: string,
    messageId: string,
    attachments: InboundAttachment[],
    from: Date,
  ): Promise<InboundAttachment[]>;
  /** The bytes a token names (`NOT_FOUND` when edited, expired or gone). */
  open(token: string): Promise<InboundAttachmentContent>;
}

/** Builds the signer and server of attachment URLs. */
export function attachmentUrls(ctx: BaseContext, options: ReceivingOptions): AttachmentUrls {
  const secret = installationSecret(ctx, SECRET_SETTING, options.secret);
  const ttl = options.attachmentUrlTtlMs ?? ATTACHMENT_URL_TTL_DEFAULT;
  const { baseUrl } = options;
  const base = () =>
    baseUrl === undefined
      ? undefined
      : publicBaseUrl(typeof baseUrl === 'function' ? baseUrl() : baseUrl, 'receiving');
  const gone = () => new MailroomError('NOT_FOUND', 'Attachment not found or its link expired');

  return {
    async sign(projectId, messageId, attachments, from) {
      const root = base();
      if (root === undefined || attachments.length === 0) return attachments;
      const key = await secret();
      // Rounded up to the hour: reads within an hour hand out the same URLs (cacheable, comparable).
      const expiresAt = Math.ceil((from.getTime() + ttl) / HOUR) * HOUR;
      return attachments.map((a, index) => ({
        ...a,
        url: `${root}/inbound/attachments/${signAttachmentToken(key, { projectId, messageId, index, expiresAt })}`,
        url_expires_at: new Date(expiresAt).toISOString(),
      }));
    },

    async open(token) {
      const ref = verifyAttachmentToken(await secret(), token);
      if (!ref || ref.expiresAt <= ctx.clock.now().getTime()) throw gone();
      const raw = await ctx.store.readReceivedRaw(ref.projectId, ref.messageId);
      if (!raw) throw gone();
      const found = await attachmentOf(raw, ref.index);
      if (!found) throw gone();
      return { filename: found.filename, content_type: found.contentType, content: found.content };
    },
  };
}
