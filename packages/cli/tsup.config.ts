import { defineConfig } from 'tsup';
import { base } from '../../tsup.base.ts';

export default defineConfig({
  ...base,
  entry: ['src/index.ts', 'src/bin.ts'],
  // Chunks, so that a command's `import()` stays a load at run time: `mailroom --help` and the admin
  // commands start without the HTTP server (fastify, @mailroom/http), nodemailer, kysely or pino, which
  // only `serve`, `worker`, `inbound` and the commands that open a database load (issue 37).
  splitting: true,
});
