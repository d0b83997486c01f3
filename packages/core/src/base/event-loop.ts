/**
 * Lets the event loop turn (I/O callbacks and timers included) before going on. Work that chains store
 * calls answered at once (SQLite is synchronous: each `await` only runs the microtasks) never gives the
 * loop a turn by itself: a worker's round of such calls holds every HTTP request of the process until it
 * ends. Awaited between the chunks of such work, so that no request waits longer than one chunk.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
