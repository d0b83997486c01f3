export { memoryStore } from './memory-store.js';
export { type MemoryTransport, type MemoryTransportOptions, memoryTransport } from './memory-transport.js';
