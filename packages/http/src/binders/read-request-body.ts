import type { Readable } from 'node:stream';

/**
 * Reads a request stream, stopping once it holds more than `limit` bytes: the caller then has enough to
 * answer 413 without buffering an attacker's gigabytes. Resolves `undefined` for an empty body.
 */
export function readRequestBody(stream: Readable, limit: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const finish = (): void => {
      cleanup();
      resolve(received === 0 ? undefined : Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(bytes);
      received += bytes.byteLength;
      if (received > limit) {
        stream.pause();
        finish();
      }
    };
    const onEnd = (): void => finish();
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('request closed before its body was read'));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
