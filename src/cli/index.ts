#!/usr/bin/env node
/** The `ordergate` bin (package.json). */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2));
