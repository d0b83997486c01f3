export type { Command } from './commands/command.js';
export { COMMANDS } from './commands/commands.js';
export type { ParsedArgs } from './flags/args.js';
export { main } from './main.js';
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './output/cli-errors.js';
export { cliLogger, type LogLevel } from './output/cli-logger.js';
export { type CliIo, type CliOutput, processIo } from './output/io.js';
export { DEMO_SENDER, DEMO_TEMPLATE_REF, type DemoProject } from './server/demo-project.js';
export {
  type DatabaseTarget,
  DEFAULT_DATABASE,
  DEFAULT_OUTBOX,
  type DeliveryTarget,
  resolveDatabase,
  resolveDelivery,
} from './server/open-engine.js';
export { type RunningServer, type ServerOptions, startServer } from './server/start-server.js';
