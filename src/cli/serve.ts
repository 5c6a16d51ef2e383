/** `ordergate serve`, which is also what `npm start` runs (src/main.ts). */
import { Command } from 'commander';
import { loadConfig, publicUrlProblem } from '../config.js';
import { DatabaseUrlError } from '../store/sql/database.js';
import { CliError, type CliIo } from './context.js';

export function serveCommand(io: CliIo): Command {
  return new Command('serve')
    .description('serve the HTTP API on HOST:PORT over DATABASE_URL until SIGTERM or SIGINT (what `npm start` runs)')
    .addHelpText(
      'after',
      '\nLogs are JSON lines on stderr; the "ordergate listening" line carries the URL (PORT=0 picks a free port).',
    )
    .action(async () => {
      const config = loadConfig(io.env);
      const problem = publicUrlProblem(config, io.env);
      if (problem !== null) throw new CliError(`cannot start: ${problem}`);
      // The HTTP stack is loaded only here, so that the other commands start fast.
      const [{ createLogger }, { serveUntilSignalled }] = await Promise.all([
        import('../logger.js'),
        import('../server.js'),
      ]);
      try {
        await serveUntilSignalled(config, createLogger(config.logLevel), (line) => io.stderr.write(`${line}\n`));
      } catch (error) {
        if (error instanceof DatabaseUrlError) throw error;
        throw new CliError(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
}
