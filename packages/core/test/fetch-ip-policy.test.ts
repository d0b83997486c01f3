import { describe, expect, it } from 'vitest';
import { parseV6, refusalOf } from '../src/fetch/ip-policy.js';

describe('refusalOf', () => {
  it.each([
    ['0.0.0.0', 'this network'],
    ['0.255.1.2', 'this network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['192.0.0.170', 'IETF'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::ffff:127.0.0.1', 'loopback (127.0.0.0/8), as IPv4-mapped'],
    ['::ffff:7f00:1', 'loopback (127.0.0.0/8), as IPv4-mapped'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:0:a00:1', 'IPv4-translated'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
    ['2002:7f00:1::1', '6to4'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['fe80::1%eth0', 'not an IP address'],
    ['localhost', 'not an IP address'],
    ['127.1', 'not an IP address'],
  ])('refuses %s (%s)', (address, why) => {
    expect(refusalOf(address)).toContain(why);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '169.255.0.1',
    '192.169.0.1',
    '223.255.255.255',
    '2606:2800:220:1:248:1893:25c8:1946',
    '2a00:1450:4001:82a::200e',
    '::ffff:93.184.216.34',
    '64:ff9b::808:808',
    '2002:5db8:d822::1',
  ])('lets the public address %s through', (address) => {
    expect(refusalOf(address)).toBeNull();
  });

  it('parses every IPv6 spelling to the same words', () => {
    const words = [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1];
    expect(parseV6('::ffff:127.0.0.1')).toEqual(words);
    expect(parseV6('::ffff:7f00:1')).toEqual(words);
    expect(parseV6('0:0:0:0:0:ffff:7f00:0001')).toEqual(words);
    expect(parseV6('fe80::')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 0]);
  });
});
