/**
 * The gates a send passes right before it goes, as one ordered list of small admission steps: the
 * project's rate, the worker's rate, the worker's concurrency (the send gate), the day's warm-up allowance
 * of the sender domain and route, and last, right before the send, the destination's shared limits (so a
 * grant's time is close to the message's arrival, and a warm-up refusal spends no destination token).
 * A step that says "not now" puts the delivery back unattempted; the steps already entered are left,
 * last first, with how the send went.
 */
import type { DestinationGate } from './destination-gate.js';
import type { SendGate } from './send-gate.js';
import type { SendRateLimiter } from './send-rate-limiter.js';
import type { WarmupGate } from './warmup.js';

/**
 * How a send that passed the gates went: `destination-slow-down` is a slow-down its destination said
 * (it slows that destination only); `deferred`: a later step put the delivery back, nothing was sent.
 */
export type SendSignal = 'ok' | 'failed' | 'slow-down' | 'destination-slow-down' | 'pause' | 'deferred';

/** The send that asks: who sends, from which domain and route, to which destination. */
export interface AdmissionRequest {
  projectId: string;
  senderDomain: string;
  route: string | undefined;
  destination: string | undefined;
}

/** The answer of the gates: go (and say how it went), or come back at `until`. */
export type Admission =
  | {
      readonly go: true;
      /** Whether the destination's limits admitted it (a slow-down then slows only that destination). */
      readonly destinationAdmitted: boolean;
      /** Leave every gate entered, last first, with how the send went. Call it once. */
      leave(signal: SendSignal): void;
    }
  | { readonly go: false; readonly until: Date; readonly reason: string; leave(): void };

type StepEntry =
  | { go: true; leave?: (signal: SendSignal) => void }
  | { go: false; until: Date; reason: string };

/** One gate. */
interface AdmissionStep {
  readonly name: string;
  enter(request: AdmissionRequest): Promise<StepEntry>;
}

/** The parts the gates are made of; the optional ones are absent when their engine option is. */
export interface AdmissionParts {
  rate: SendRateLimiter;
  projectRate(projectId: string): SendRateLimiter | undefined;
  gate: SendGate;
  warmup: WarmupGate | undefined;
  destinations: DestinationGate | undefined;
}

/** The gates of one worker, in order. */
export function createSendAdmission(parts: AdmissionParts): {
  enter(request: AdmissionRequest): Promise<Admission>;
} {
  const steps: AdmissionStep[] = [
    {
      name: 'project rate',
      async enter({ projectId }) {
        const limiter = parts.projectRate(projectId);
        if (!limiter) return { go: true };
        const done = await limiter.acquire();
        return { go: true, leave: () => done() };
      },
    },
    {
      name: 'worker rate',
      async enter() {
        const done = await parts.rate.acquire();
        return { go: true, leave: () => done() };
      },
    },
    {
      name: 'concurrency',
      async enter() {
        const release = await parts.gate.acquire();
        return {
          go: true,
          leave: (signal) =>
            release(signal === 'ok' || signal === 'pause' || signal === 'slow-down' ? signal : 'failed'),
        };
      },
    },
    {
      name: 'warm-up',
      async enter({ senderDomain, route }) {
        const warm = await parts.warmup?.admit(senderDomain, route);
        return !warm || warm.go ? { go: true } : warm;
      },
    },
    {
      name: 'destination',
      async enter({ destination }) {
        if (destination === undefined || !parts.destinations) return { go: true };
        const admitted = await parts.destinations.admit(destination);
        if (!admitted.go) return admitted;
        return {
          go: true,
          // A pause of the whole transport says nothing about the destination.
          leave: (signal) => {
            if (signal === 'pause') return;
            admitted.done(
              signal === 'ok' ? 'ok' : signal === 'destination-slow-down' ? 'slow-down' : 'failed',
            );
          },
        };
      },
    },
  ];

  return {
    async enter(request) {
      const entered: Array<(signal: SendSignal) => void> = [];
      const leave = (signal: SendSignal) => {
        for (let i = entered.length - 1; i >= 0; i--) entered[i]?.(signal);
      };
      let destinationAdmitted = false;
      for (const step of steps) {
        const entry = await step.enter(request);
        if (!entry.go)
          return { go: false, until: entry.until, reason: entry.reason, leave: () => leave('deferred') };
        if (entry.leave) entered.push(entry.leave);
        if (step.name === 'destination' && request.destination !== undefined && parts.destinations) {
          destinationAdmitted = true;
        }
      }
      return { go: true, destinationAdmitted, leave };
    },
  };
}
