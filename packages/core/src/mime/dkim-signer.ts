/**
 * DKIM signing (RFC 6376, relaxed/relaxed) of a finished message, with `rsa-sha256` or
 * `ed25519-sha256` (RFC 8463) chosen from the key's type.
 *
 * Why not nodemailer's signer: it always writes `a=rsa-sha256` and, when the key cannot sign that way
 * (an Ed25519 key, a broken PEM), it swallows the error and sends the message unsigned.
 */
import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { MailroomError } from '../base/errors.js';
import type { DkimConfig } from '../store/records.js';

/** A DKIM key together with the domain it signs for (`d=`). */
export type DkimKey = DkimConfig & { domain: string };

/**
 * Header fields signed when present, in this order. `from` appears twice on purpose: the second,
 * unmatched entry signs the absence of another From header, so none can be prepended later.
 */
export const DKIM_SIGNED_HEADERS: readonly string[] = [
  'from',
  'reply-to',
  'to',
  'cc',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'list-id',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'from',
];

const DNS_LABELS = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?$/;

/** Options of {@link createDkimSigner}. */
export interface DkimSignerOptions {
  /**
   * Parsed keys kept, by selector, domain and PEM; the oldest is dropped beyond this.
   * @default 256
   */
  maxKeys?: number;
}

/** Signs finished messages; parses each distinct key once. */
export interface DkimSigner {
  /**
   * Returns `raw` with a `DKIM-Signature` header prepended.
   * @throws MailroomError `TRANSPORT_PERMANENT` when the key is not a usable RSA or Ed25519 private key
   * (no `responseCode`: the recipient is not at fault).
   */
  sign(raw: Buffer, key: DkimKey): Buffer;
}

/** Creates a signer with its own cache of parsed keys. */
export function createDkimSigner(options: DkimSignerOptions = {}): DkimSigner {
  const maxKeys = options.maxKeys ?? 256;
  const keys = new Map<string, { key: KeyObject; algorithm: 'rsa-sha256' | 'ed25519-sha256' }>();

  // Parsing a PEM costs about as much as signing with it: do it once per distinct key.
  function parsed(config: DkimKey) {
    const id = createHash('sha256')
      .update(`${config.selector}\0${config.domain}\0${config.privateKey}`)
      .digest('base64');
    const cached = keys.get(id);
    if (cached) return cached;
    // Both go verbatim into the header (and the selector into a DNS name).
    if (!DNS_LABELS.test(config.selector) || !DNS_LABELS.test(config.domain)) {
      throw keyError(config, 'has an invalid selector or domain');
    }
    let key: KeyObject;
    try {
      key = createPrivateKey(config.privateKey);
    } catch (cause) {
      throw keyError(config, 'is not a valid private key', cause);
    }
    const type = key.asymmetricKeyType;
    if (type !== 'rsa' && type !== 'ed25519') throw keyError(config, `has unsupported type ${String(type)}`);
    const entry = { key, algorithm: type === 'rsa' ? ('rsa-sha256' as const) : ('ed25519-sha256' as const) };
    if (keys.size >= maxKeys) {
      const oldest = keys.keys().next().value;
      if (oldest !== undefined) keys.delete(oldest);
    }
    keys.set(id, entry);
    return entry;
  }

  return {
    sign(raw, config) {
      const { key, algorithm } = parsed(config);
      const split = raw.indexOf('\r\n\r\n');
      const headerEnd = split < 0 ? raw.length : split + 2;
      const headerBlock = raw.subarray(0, headerEnd).toString('latin1');
      const body = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);

      const fields = parseHeaderFields(headerBlock);
      const used = new Set<number>();
      const names: string[] = [];
      const canonical: string[] = [];
      for (const name of DKIM_SIGNED_HEADERS) {
        // RFC 6376 5.4.2: repeated names take the instances from the bottom up.
        let index = -1;
        for (let i = fields.length - 1; i >= 0; i--) {
          if (!used.has(i) && fields[i]?.name === name) {
            index = i;
            break;
          }
        }
        const field = fields[index];
        if (field) {
          used.add(index);
          canonical.push(`${name}:${relaxedValue(field.value)}\r\n`);
          names.push(name);
        } else if (name === 'from' && names.includes('from')) {
          names.push(name);
        }
      }

      const tags = [
        'v=1',
        `a=${algorithm}`,
        'c=relaxed/relaxed',
        `d=${config.domain}`,
        `s=${config.selector}`,
        `t=${Math.floor(Date.now() / 1000)}`,
        `h=${names.join(':')}`,
        `bh=${createHash('sha256').update(relaxedBody(body)).digest('base64')}`,
        'b=',
      ];
      const unsigned = `DKIM-Signature: ${tags.join(';\r\n\t')}`;
      const data = Buffer.from(
        `${canonical.join('')}dkim-signature:${relaxedValue(unsigned.slice(15))}`,
        'latin1',
      );
      const signature =
        algorithm === 'rsa-sha256'
          ? sign('sha256', data, key)
          : sign(null, createHash('sha256').update(data).digest(), key);
      const folded = signature.toString('base64').replace(/.{1,72}/g, '\r\n\t$&');
      return Buffer.concat([Buffer.from(`${unsigned}${folded}\r\n`, 'latin1'), raw]);
    },
  };
}

const CRLF = Buffer.from('\r\n', 'latin1');

/** No tab, no run of spaces, no space before a line end or at the end, every line break CRLF. */
function isRelaxedCanonical(body: Buffer): boolean {
  if (
    body.indexOf(0x09) >= 0 ||
    body.indexOf('  ', 0, 'latin1') >= 0 ||
    body.indexOf(' \r', 0, 'latin1') >= 0
  ) {
    return false;
  }
  if (body.length > 0 && body[body.length - 1] === 0x20) return false;
  let start = 0;
  for (;;) {
    const lf = body.indexOf(0x0a, start);
    if (lf < 0) return true;
    if (lf === 0 || body[lf - 1] !== 0x0d) return false;
    start = lf + 1;
  }
}

function keyError(config: DkimKey, problem: string, cause?: unknown): MailroomError {
  return new MailroomError(
    'TRANSPORT_PERMANENT',
    `DKIM key ${config.selector}._domainkey.${config.domain} ${problem}`,
    { cause, source: 'dkim', retryable: false },
  );
}

/** Splits a header block (latin1, CRLF) into fields; folded lines stay in their field's value. */
function parseHeaderFields(block: string): Array<{ name: string; value: string }> {
  const fields: Array<{ name: string; value: string }> = [];
  for (const line of block.split('\r\n')) {
    if (line === '') continue;
    const last = fields[fields.length - 1];
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      last.value += `\r\n${line}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    fields.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1) });
  }
  return fields;
}

/** RFC 6376 3.4.2: unfold, squeeze runs of WSP to one SP, trim. */
function relaxedValue(value: string): string {
  return value
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** RFC 6376 3.4.4: squeeze WSP, drop it at line ends, drop empty lines at the end, end with CRLF. */
function relaxedBody(body: Buffer): Buffer {
  // Base64 and most text parts are canonical already except for trailing empty lines: found with native
  // searches, that saves converting and rewriting a whole newsletter four times per signature.
  if (isRelaxedCanonical(body)) {
    let end = body.length;
    while (end >= 2 && body[end - 2] === 13 && body[end - 1] === 10) end -= 2;
    if (end === 0) return Buffer.alloc(0);
    return Buffer.concat([body.subarray(0, end), CRLF]);
  }
  const text = body
    .toString('latin1')
    .replace(/\r?\n/g, '\r\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/ (?=\r\n|$)/g, '')
    .replace(/(\r\n)+$/, '');
  return Buffer.from(text === '' ? '' : `${text}\r\n`, 'latin1');
}
