/** `npm start`: serve with the settings from the environment. */
import { ConfigError, loadConfig } from './config.js';
import { DatabaseUrlError } from './store/database.js';
import { createLogger } from './logger.js';
import { serveUntilSignalled } from './server.js';

try {
  const config = loadConfig();
  await serveUntilSignalled(config, createLogger(config.logLevel));
} catch (error) {
  if (error instanceof ConfigError || error instanceof DatabaseUrlError) {
    process.stderr.write(`ordergate: ${error.message}\n`);
  } else {
    process.stderr.write(`ordergate: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exitCode = 1;
}
