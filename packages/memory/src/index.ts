export { memoryStore } from './memory-store.js';
export { type MemoryTransport, type MemoryTransportOptions, memoryTransport } from './memory-transport.js';
export type { BounceDetails, ReportSubject } from './simulator-reports.js';
export { buildDeliveryStatusNotification, buildFeedbackReport } from './simulator-reports.js';
export {
  type InboundHook,
  SIMULATOR_DOMAIN,
  type SimulatedOutcome,
  type SimulatorEnvelope,
  type SimulatorReport,
  type SimulatorTransport,
  type SimulatorTransportOptions,
  simulatorTransport,
} from './simulator-transport.js';
