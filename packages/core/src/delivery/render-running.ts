/**
 * What a render thread is rendering now, in memory it shares with its pool: the job's number (0: none) and
 * when its render began. The pool's watch reads it to find a runaway render (`RenderPoolOptions.stuckMs`).
 * Written by the thread itself, it stays true while the pool's own thread is busy: a watch that judged
 * from the replies it had read would take a main thread that was late reading them (a synchronous store
 * round, a GC pause) for a render that held its thread, and move a normal broadcast to the slow lane.
 */
export interface RunningRender {
  /** The job being rendered (slot 0), 0 when none. */
  readonly job: Int32Array;
  /** When its render began (slot 0), in {@link renderClockMs}'s milliseconds. */
  readonly since: Float64Array;
}

/** The shared memory of one thread's {@link RunningRender} (sent to the thread with `init`). */
export function runningRenderMemory(): SharedArrayBuffer {
  return new SharedArrayBuffer(16);
}

/** The views of {@link runningRenderMemory}. */
export function runningRender(memory: SharedArrayBuffer): RunningRender {
  return { since: new Float64Array(memory, 0, 1), job: new Int32Array(memory, 8, 1) };
}

/** Milliseconds on a clock every thread shares (each thread's `performance.now()` has its own origin). */
export const renderClockMs = (): number => performance.timeOrigin + performance.now();
