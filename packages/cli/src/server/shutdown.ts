import type { CliIo } from '../output/io.js';

/**
 * Waits until the process is asked to stop (SIGTERM, SIGINT, or a test's trigger), then runs `stop`. The
 * trigger stays armed while `stop` runs, so that a second signal can force the exit of a stuck shutdown.
 */
export async function runUntilShutdown(io: CliIo, stop: () => Promise<void>): Promise<void> {
  let disarm: () => void = () => {};
  await new Promise<void>((resolve) => {
    disarm = io.onShutdown?.(resolve) ?? (() => {});
  });
  try {
    await stop();
  } finally {
    disarm();
  }
}
