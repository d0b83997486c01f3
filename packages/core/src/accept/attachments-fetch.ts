import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import { isByteCapError } from '../fetch/index.js';
import type { AttachmentSpec } from '../store/records.js';

/**
 * Fetches the attachments given by URL through the guarded fetcher, once per request (a single message
 * or a broadcast, never per recipient), and stores their bytes in `contentBase64` so that workers never
 * fetch: what was accepted is exactly what every recipient gets. `budget` is what is left of the
 * request's decoded-size limit; each fetch is capped to it.
 *
 * @throws MailroomError `PAYLOAD_TOO_LARGE` when a file passes the remaining budget; `FETCH_REFUSED` when
 * a URL is refused, cannot be fetched, or answers anything but a 2xx with the whole file.
 * @returns the decoded bytes fetched in total.
 */
export async function fetchUrlAttachments(
  ctx: Pick<BaseContext, 'fetcher' | 'limits'>,
  attachments: AttachmentSpec[],
  budget: number,
): Promise<number> {
  let total = 0;
  for (const attachment of attachments) {
    if (attachment.url === undefined || attachment.contentBase64 !== undefined) continue;
    const remaining = budget - total;
    const bytes = await fetchOne(ctx, attachment, remaining);
    total += bytes.length;
    attachment.contentBase64 = bytes.toString('base64');
  }
  return total;
}

async function fetchOne(
  ctx: Pick<BaseContext, 'fetcher' | 'limits'>,
  attachment: AttachmentSpec,
  remaining: number,
): Promise<Buffer> {
  const label = `Attachment ${attachment.filename}`;
  const tooLarge = () =>
    new MailroomError(
      'PAYLOAD_TOO_LARGE',
      `${label}: the attachments pass the limit of ${ctx.limits.attachments.maxTotalBytes} bytes in total`,
    );
  if (remaining <= 0) throw tooLarge();
  try {
    const res = await ctx.fetcher.fetch(attachment.url as string, { maxBytes: remaining });
    if (res.status < 200 || res.status > 299 || res.status === 206) {
      res.cancel();
      throw new MailroomError('FETCH_REFUSED', `${label}: the URL answered HTTP ${res.status}`);
    }
    return await res.bytes();
  } catch (error) {
    if (isByteCapError(error)) throw tooLarge();
    if (error instanceof MailroomError && error.code === 'FETCH_REFUSED') {
      throw new MailroomError('FETCH_REFUSED', `${label}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}
