import { BlockList, isIP } from 'node:net';
import { MailroomError } from '@mailroom/core';
import type { NeutralRequest } from '../neutral/types.js';

/** The client address of a request: the direct peer, or the address a trusted proxy forwarded. */
export type ClientAddressOf = (req: NeutralRequest) => string | undefined;

/**
 * How the client address is found, from `trustProxy` (addresses or CIDR ranges of the reverse proxies in
 * front of the server). A request whose direct peer (`req.ip`) is not one of them is that peer's own; one
 * from a trusted proxy is the right-most address of its `Forwarded` (`for=`) header, else of its
 * `X-Forwarded-For`, that is not itself a trusted proxy: a client cannot choose it by sending its own header,
 * since each trusted proxy appends the peer it saw.
 */
export function createClientAddress(trustProxy: readonly string[] | undefined): ClientAddressOf {
  if (!trustProxy || trustProxy.length === 0) return (req) => req.ip;
  const trusted = new BlockList();
  for (const entry of trustProxy) addTrusted(trusted, entry);
  const isTrusted = (address: string): boolean => {
    const plain = unmapped(address);
    const family = isIP(plain);
    return family !== 0 && trusted.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
  return (req) => {
    const peer = req.ip;
    if (peer === undefined || !isTrusted(peer)) return peer;
    const forwarded = req.headers.forwarded;
    const chain =
      forwarded !== undefined ? forwardedFor(forwarded) : splitList(req.headers['x-forwarded-for'] ?? '');
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = chain[i] as string;
      if (!isTrusted(hop)) return hop;
    }
    // Every hop is a trusted proxy (or none was forwarded): the left-most is the nearest to the client.
    return chain[0] ?? peer;
  };
}

/** Parses one `trustProxy` entry (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`) into `list`. */
function addTrusted(list: BlockList, entry: string): void {
  const [address = '', bits, extra] = entry.trim().split('/');
  const family = isIP(address);
  const prefix = bits === undefined ? undefined : Number(bits);
  const max = family === 6 ? 128 : 32;
  if (
    family === 0 ||
    extra !== undefined ||
    (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max && bits !== ''))
  ) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `trustProxy: "${entry}" is not an IP address or a CIDR range (10.0.0.1, 10.0.0.0/8, ::1)`,
      { source: '@mailroom/http' },
    );
  }
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (prefix === undefined) list.addAddress(address, type);
  else list.addSubnet(address, prefix, type);
}

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) as `127.0.0.1`. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match ? (match[1] as string) : address;
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(unmapped);
}

/**
 * The `for=` nodes of a `Forwarded` header (RFC 7239), in order: quotes, brackets and ports removed
 * (`for="[2001:db8::1]:4711"` is `2001:db8::1`). A hop without `for=` counts as `unknown`, never trusted.
 */
function forwardedFor(value: string): string[] {
  return value
    .split(',')
    .filter((element) => element.trim() !== '')
    .map((element) => {
      const pair = element
        .split(';')
        .map((part) => part.trim())
        .find((part) => part.toLowerCase().startsWith('for='));
      if (pair === undefined) return 'unknown';
      let node = pair.slice(4).trim().replace(/^"|"$/g, '');
      const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(node);
      if (bracketed) node = bracketed[1] as string;
      else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(node)) node = node.slice(0, node.lastIndexOf(':'));
      return unmapped(node);
    });
}
