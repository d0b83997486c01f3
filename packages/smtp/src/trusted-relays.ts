/**
 * The relays the inbound listener trusts with any volume: networks in CIDR notation (`10.0.0.0/8`,
 * `2001:db8::/32`, or a bare address for one host). In the usual set-up every report comes from the
 * organisation's own relay, one IP address, which per-IP limits would throttle.
 */
import { BlockList, isIP } from 'node:net';

/** Whether an address (IPv4, IPv6, or IPv4-mapped IPv6) is in one of the networks. */
export type RelayMatcher = (address: string | undefined) => boolean;

/**
 * A matcher for `networks`. Throws a `TypeError` naming the first entry that is not an address or a
 * network in CIDR notation.
 */
export function trustedRelays(networks: readonly string[]): RelayMatcher {
  if (networks.length === 0) return () => false;
  const list = new BlockList();
  for (const network of networks) {
    const [address = '', prefix, extra] = network.trim().split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (family === 0 || extra !== undefined || !(bits >= 0 && bits <= max)) {
      throw new TypeError(`not an address or a network in CIDR notation: '${network}'`);
    }
    list.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return (address) => {
    if (!address) return false;
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}
