import { createHash } from 'node:crypto';

/**
 * The form an erased address keeps (the consent history, the erased-address list that stops it being
 * mailed again): `sha256:<hex>` of the project and the normalized address. Without the project the same
 * person would have the same hash in every project.
 */
export function hashedAddress(projectId: string, address: string): string {
  return `sha256:${createHash('sha256').update(`${projectId}\u0000${address}`, 'utf8').digest('hex')}`;
}
