import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses the guarded fetcher may connect to. Everything that is not a public unicast
 * address is refused: loopback, private, link-local (and the cloud metadata service inside it), CGNAT,
 * "this network", multicast, reserved and documentation ranges, and every IPv6 form that embeds an
 * IPv4 address (mapped, compatible, translated, NAT64, 6to4) when the embedded address is refused.
 */

/** One IPv4 range: its first address as a 32-bit number, its prefix length, and why it is refused. */
interface V4Range {
  base: number;
  bits: number;
  name: string;
}

/** One IPv6 range: its first address as eight 16-bit words, its prefix length, and why it is refused. */
interface V6Range {
  words: number[];
  bits: number;
  name: string;
}

const V4_REFUSED: readonly V4Range[] = [
  v4('0.0.0.0', 8, '"this network" (0.0.0.0/8)'),
  v4('10.0.0.0', 8, 'private (10.0.0.0/8)'),
  v4('100.64.0.0', 10, 'carrier-grade NAT (100.64.0.0/10)'),
  v4('127.0.0.0', 8, 'loopback (127.0.0.0/8)'),
  v4('169.254.0.0', 16, 'link-local / cloud metadata (169.254.0.0/16)'),
  v4('172.16.0.0', 12, 'private (172.16.0.0/12)'),
  v4('192.0.0.0', 24, 'IETF protocol assignments (192.0.0.0/24)'),
  v4('192.0.2.0', 24, 'documentation (192.0.2.0/24)'),
  v4('192.88.99.0', 24, '6to4 relay (192.88.99.0/24)'),
  v4('192.168.0.0', 16, 'private (192.168.0.0/16)'),
  v4('198.18.0.0', 15, 'benchmarking (198.18.0.0/15)'),
  v4('198.51.100.0', 24, 'documentation (198.51.100.0/24)'),
  v4('203.0.113.0', 24, 'documentation (203.0.113.0/24)'),
  v4('224.0.0.0', 4, 'multicast (224.0.0.0/4)'),
  // 240/4 holds the broadcast address 255.255.255.255 as well.
  v4('240.0.0.0', 4, 'reserved / broadcast (240.0.0.0/4)'),
];

/** IPv6 ranges whose last 32 bits are an IPv4 address: refused when that address is. */
const V6_EMBEDDING: readonly V6Range[] = [
  v6('::ffff:0:0', 96, 'IPv4-mapped'),
  v6('::ffff:0:0:0', 96, 'IPv4-translated'),
  v6('64:ff9b::', 96, 'NAT64'),
];

const V6_REFUSED: readonly V6Range[] = [
  v6('::', 128, 'unspecified (::)'),
  v6('::1', 128, 'loopback (::1)'),
  // The rest of ::/96 is the deprecated IPv4-compatible form: never a real destination.
  v6('::', 96, 'IPv4-compatible (::/96)'),
  v6('64:ff9b:1::', 48, 'local-use NAT64 (64:ff9b:1::/48)'),
  v6('100::', 64, 'discard-only (100::/64)'),
  v6('2001::', 32, 'Teredo (2001::/32)'),
  v6('2001:db8::', 32, 'documentation (2001:db8::/32)'),
  v6('fc00::', 7, 'unique local (fc00::/7)'),
  v6('fe80::', 10, 'link-local (fe80::/10)'),
  v6('fec0::', 10, 'site-local (fec0::/10)'),
  v6('ff00::', 8, 'multicast (ff00::/8)'),
];

/**
 * Why the guarded fetcher refuses to connect to `address`, or `null` when it is a public unicast address.
 * `address` must be an IP literal (IPv4 dotted decimal or IPv6 without brackets); anything else, an IPv6
 * zone id included, is refused as `not an IP address`.
 *
 * @example refusalOf('169.254.169.254') // 'link-local / cloud metadata (169.254.0.0/16)'
 * @example refusalOf('::ffff:7f00:1') // 'loopback (127.0.0.0/8), as IPv4-mapped IPv6'
 * @example refusalOf('93.184.216.34') // null
 */
export function refusalOf(address: string): string | null {
  if (isIPv4(address)) return v4Refusal(parseV4(address));
  if (!isIPv6(address) || address.includes('%')) return 'not an IP address';
  const words = parseV6(address);
  for (const range of V6_EMBEDDING) {
    if (inV6(words, range)) {
      const inner = v4Refusal((((words[6] as number) << 16) | (words[7] as number)) >>> 0);
      return inner === null ? null : `${inner}, as ${range.name} IPv6`;
    }
  }
  // 6to4 (2002::/16) carries its IPv4 address in bits 16-47.
  if (words[0] === 0x2002) {
    const inner = v4Refusal((((words[1] as number) << 16) | (words[2] as number)) >>> 0);
    return inner === null ? null : `${inner}, inside 6to4 IPv6 (2002::/16)`;
  }
  for (const range of V6_REFUSED) if (inV6(words, range)) return range.name;
  return null;
}

/** Parses a dotted-decimal IPv4 address (as `net.isIPv4` accepts it) into an unsigned 32-bit number. */
export function parseV4(address: string): number {
  let value = 0;
  for (const part of address.split('.')) value = value * 256 + Number(part);
  return value >>> 0;
}

/** Parses an IPv6 address (as `net.isIPv6` accepts it, without zone id) into eight 16-bit words. */
export function parseV6(address: string): number[] {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const toWords = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const v = parseV4(group);
        out.push(v >>> 16, v & 0xffff);
      } else {
        out.push(Number.parseInt(group, 16));
      }
    }
    return out;
  };
  const left = toWords(head);
  if (tail === undefined) return left;
  const right = toWords(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function v4Refusal(value: number): string | null {
  for (const range of V4_REFUSED) {
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    if ((value & mask) >>> 0 === range.base) return range.name;
  }
  return null;
}

function inV6(words: number[], range: V6Range): boolean {
  let bits = range.bits;
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((words[i] as number) & mask) !== ((range.words[i] as number) & mask)) return false;
  }
  return true;
}

function v4(address: string, bits: number, name: string): V4Range {
  return { base: parseV4(address), bits, name };
}

function v6(address: string, bits: number, name: string): V6Range {
  return { words: parseV6(address), bits, name };
}
