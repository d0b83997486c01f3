/**
 * A loopback DNS zone in a process of its own (its CPU is not the measured process's): serves the zone
 * given as JSON in argv[2], prints `dns <address>` once listening, and runs until SIGTERM.
 *
 * Usage: dns-zone-process.ts '{"name":{"TXT":["..."]}}'
 */
import { startDnsZone, type Zone } from '../../test/support/dns-zone.js';

const zone = await startDnsZone(JSON.parse(String(process.argv[2])) as Zone);
process.stdout.write(`dns ${zone.address}\n`);
process.once('SIGTERM', () => {
  void zone.close().then(() => process.exit(0));
});
