import { isIP } from 'node:net';
import { UsageError } from '../output/cli-errors.js';

/**
 * The proxies of `--trust-proxy` (repeatable, each value possibly a comma-separated list): IP addresses or
 * CIDR ranges, checked here so that a typo is a usage error naming the flag, not a fault at start.
 */
export function trustProxyOf(values: readonly string[], command: string): string[] {
  const entries = values.flatMap((value) => value.split(',').map((part) => part.trim()));
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? 0 : Number(bits);
    if (
      family === 0 ||
      extra !== undefined ||
      bits === '' ||
      !(Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 6 ? 128 : 32))
    ) {
      throw new UsageError(
        `--trust-proxy: "${entry}" is not an IP address or a CIDR range (127.0.0.1, 10.0.0.0/8, ::1)`,
        command,
      );
    }
  }
  return entries;
}
