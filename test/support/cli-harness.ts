import { type CliIo, main } from '@mailroom/cli';
import { vi } from 'vitest';

/** A `mailroom` command running in-process, as the tests drive it. */
export interface RunningCli {
  readonly out: string;
  readonly err: string;
  /** The exit code, once `main` resolves. */
  done: Promise<number>;
  /** What SIGTERM does to the real process: starts the graceful shutdown. */
  stop(): void;
}

/** Runs `mailroom <argv>` in-process with captured output and a shutdown trigger standing for SIGTERM. */
export function startCli(cwd: string, argv: string[], env: Record<string, string> = {}): RunningCli {
  let out = '';
  let err = '';
  let trigger: (() => void) | undefined;
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env,
    cwd,
    onShutdown: (stop) => {
      trigger = stop;
      return () => {
        trigger = undefined;
      };
    },
  };
  return {
    get out() {
      return out;
    },
    get err() {
      return err;
    },
    done: main(argv, io),
    stop: () => trigger?.(),
  };
}

/** Waits for a line of `cli.out` matching `pattern` and returns the match. */
export async function waitForOutput(cli: RunningCli, pattern: RegExp): Promise<RegExpMatchArray> {
  return vi.waitFor(
    () => {
      const match = cli.out.match(pattern);
      if (!match) throw new Error(`no ${pattern} in output yet:\n${cli.out}\n${cli.err}`);
      return match;
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** Runs `mailroom <argv>` in-process against `cwd` to its end, capturing stdout and stderr. */
export async function runCli(
  cwd: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env,
    cwd,
    onShutdown: () => () => {},
  };
  const code = await main(argv, io);
  return { code, out, err };
}
