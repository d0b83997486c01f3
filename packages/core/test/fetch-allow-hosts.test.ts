import { describe, expect, it } from 'vitest';
import { createGuardedFetcher, parseAllowHost } from '../src/index.js';

/** The guarded fetcher's allow-list entries: exact HOST:PORT, anything else refused when the fetcher is made. */
describe('allowHosts entries', () => {
  it('normalizes HOST:PORT, lower-casing names and unbracketing IPv6', () => {
    expect(parseAllowHost('127.0.0.1:8080')).toBe('127.0.0.1:8080');
    expect(parseAllowHost('MinIO.internal:9000')).toBe('minio.internal:9000');
    expect(parseAllowHost('object_store:443')).toBe('object_store:443');
    expect(parseAllowHost('[::1]:9000')).toBe('::1:9000');
  });

  it('refuses an entry that is not HOST:PORT, naming it', () => {
    for (const entry of [
      '',
      '127.0.0.1',
      '127.0.0.1:',
      ':8080',
      '127.0.0.1:0',
      '127.0.0.1:65536',
      '127.0.0.1:80x',
      '127.0.0.1:+80',
      'http://127.0.0.1:8080',
      '127.0.0.1:8080/path',
      'user@host:80',
      'two words:80',
      '::1:9000',
      '[not-v6]:9000',
    ]) {
      expect(() => parseAllowHost(entry), entry).toThrow(
        expect.objectContaining({
          code: 'VALIDATION_FAILED',
          message: expect.stringContaining(`'${entry}'`),
        }),
      );
    }
    expect(() => createGuardedFetcher({ allowHosts: ['localhost'] })).toThrow(/is not HOST:PORT/);
  });
});
