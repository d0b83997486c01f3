export type { ParsedArgs } from './args.js';
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './cli-errors.js';
export { cliLogger, type LogLevel } from './cli-logger.js';
export type { Command } from './command.js';
export { COMMANDS } from './commands.js';
export { DEMO_SENDER, DEMO_TEMPLATE_REF, type DemoProject } from './demo-project.js';
export { type CliIo, type CliOutput, processIo } from './io.js';
export { main } from './main.js';
export {
  type DatabaseTarget,
  DEFAULT_DATABASE,
  DEFAULT_OUTBOX,
  type DeliveryTarget,
  resolveDatabase,
  resolveDelivery,
} from './open-engine.js';
export { type RunningServer, type ServerOptions, startServer } from './start-server.js';
