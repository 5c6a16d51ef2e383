/** `npm start`: the same as `ordergate serve`, with the settings from the environment. */
import { runCli } from './cli/program.js';

process.exitCode = await runCli(['serve']);
