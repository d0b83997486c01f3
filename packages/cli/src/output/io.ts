/** A place the CLI writes lines to: `process.stdout`, `process.stderr`, or a buffer in tests. */
export interface CliOutput {
  write(chunk: string): unknown;
  /** True when the output is a terminal (enables the live progress bar). */
  isTTY?: boolean;
}

/**
 * Everything the CLI takes from its process, injectable so that tests run `main` in-process.
 */
export interface CliIo {
  /** Results and the one-time secret. */
  stdout: CliOutput;
  /** Errors, warnings and the server's log lines. */
  stderr: CliOutput;
  /** Environment (`MAILROOM_DATABASE_URL`, `MAILROOM_SMTP_URL`, `PORT`). */
  env: Record<string, string | undefined>;
  /** Directory that relative paths (`./mailroom.db`, `./.mailroom/outbox`) are resolved against. */
  cwd: string;
  /**
   * Arms the shutdown of a long-running command (`serve`, `worker`, a live `broadcast status`): `stop` is
   * to be called once when the process should stop. Returns a function that disarms it.
   * @default SIGTERM and SIGINT of this process
   */
  onShutdown?: (stop: () => void) => () => void;
}

/** The real process: its streams, environment, working directory and signals. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    onShutdown: onSignals,
  };
}

/** Writes one line. */
export function println(out: CliOutput, line = ''): void {
  out.write(`${line}\n`);
}

/**
 * A repeat this soon after the first signal is the same request: Ctrl-C (or `kill -TERM -<group>`) reaches
 * every process of the group, and a wrapper in it (npx, pnpm) relays its copy to the CLI as well; on a busy
 * machine the copy has come over 500 ms late. An operator who insists presses again after that.
 */
const RELAYED_WITHIN_MS = 1_500;

/**
 * Arms `stop` on SIGTERM and SIGINT of this process; a second signal while stopping exits at once, unless it
 * comes within {@link RELAYED_WITHIN_MS} of the first (a relayed copy, not the operator insisting).
 */
export function onSignals(stop: () => void): () => void {
  let stopping = false;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping && performance.now() - firstAt < RELAYED_WITHIN_MS) return;
    if (stopping) {
      // The operator insists: the graceful path is stuck (a hung SMTP server, say).
      process.stderr.write(`mailroom: ${signal} again, exiting without waiting\n`);
      process.exit(1);
    }
    stopping = true;
    firstAt = performance.now();
    stop();
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
