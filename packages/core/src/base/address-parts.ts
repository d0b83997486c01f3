/**
 * The domain of an email address, lower-cased (domains are case-insensitive: RFC 5321 §2.4), so that
 * every comparison of domains (sender domains, destinations, warm-up, the reputation guard) agrees;
 * `localhost` for a bare name without `@`, as a Message-ID needs some domain.
 */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at >= 0 ? address.slice(at + 1).toLowerCase() : 'localhost';
}

/** The local part of an email address, as written (it may be case-sensitive: RFC 5321 §2.4): the spec's default display name. */
export function localPart(address: string): string {
  const at = address.lastIndexOf('@');
  return at > 0 ? address.slice(0, at) : address;
}

/**
 * The form in which suppressions are stored and matched (docs/suppressions.md): the address with its ASCII
 * letters lower-cased, in the local part as in the domain, every other character as it is. Most mailbox
 * providers treat the local part case-insensitively, so `suppA@x.test` suppressed keeps `SUPPA@x.test` and
 * `suppa@x.test` from mail too. ASCII only, so that every store folds alike (SQLite's `lower()` folds no
 * other letter).
 * @example foldAddress('SuppA@example.com') // 'suppa@example.com'
 */
export function foldAddress(address: string): string {
  return /[A-Z]/.test(address) ? address.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : address;
}
