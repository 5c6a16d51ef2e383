/**
 * The `ordergate` command: a thin layer over the operator services. Every command works directly on
 * DATABASE_URL, writes its result to stdout and hints to stderr, and a failure exits non-zero with one
 * line `ordergate: <reason>` on stderr.
 */
import { packageVersion } from '../package-root.js';
import { Command, CommanderError } from 'commander';
import { apiKeysCommand } from './apikeys.js';
import { auditCommand } from './audit.js';
import { algosCommand } from './algos.js';
import { CliError, processIo, type CliIo } from './context.js';
import { demoCommand } from './demo.js';
import { demoOfferCommand } from './demo-offer.js';
import { exchangeSimCommand } from './exchange-sim.js';
import { fundsCommand } from './funds.js';
import { ofsCommand } from './ofs.js';
import { omsCommand } from './oms.js';
import { serveCommand } from './serve.js';
import { usersCommand } from './users.js';
import { webhooksCommand } from './webhooks.js';

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/** Usage errors of every (sub)command throw instead of exiting, and print one `ordergate: ...` line. */
function configureErrors(command: Command, io: CliIo): void {
  command
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      outputError: (text, write) => write(`ordergate: ${oneLine(text.replace(/^error: /, ''))}\n`),
    });
  for (const sub of command.commands) configureErrors(sub, io);
}

export function buildProgram(io: CliIo): Command {
  const program = new Command('ordergate')
    .description('ordergate operator commands; they work directly on DATABASE_URL and need no running server')
    .version(packageVersion())
    .addHelpText(
      'after',
      [
        '',
        'Environment:',
        '  DATABASE_URL  sqlite:PATH (default sqlite:./data/ordergate.db), postgres:// or postgresql://',
        '  HOST, PORT    where `serve` listens (default 127.0.0.1:8080); `demo` uses them in its curl commands',
        '  LOG_LEVEL     fatal, error, warn, info (default), debug, trace or silent',
        '  OMS_EMBEDDED  true (default): `serve` runs the OMS worker; false: run it with `ordergate oms`',
        '  OMS_POLL_MS   pause between two passes of the OMS worker (default 50)',
        '  OMS_LEASE_MS  how long the outbox entries of a worker that died wait for another (default 30000)',
        '  WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_FOR_SECONDS  webhook answer timeout (default 10000) and retry time (default 86400)',
        '  WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES, WEBHOOK_ALLOW_ANY_PORT  true: webhooks may use plain http / reach private addresses / any port (default false)',
        '  RATE_LIMIT_ORDERS_PER_SECOND (10), RATE_LIMIT_LOGINS_PER_MINUTE (10 failed), RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS (100); 0: off',
        '  RATE_LIMIT_LOGIN_BACKOFF_AFTER (5), RATE_LIMIT_LOGIN_BACKOFF_MAX_SECONDS (900)  failed logins per user id and address before back-off',
        '  REDIS_URL     share the rate-limit counts between nodes (redis://host:port)',
        '  LOGIN_REQUIRES_API_KEY  true: a login must carry an active api_key of the user (default false)',
        '  STATIC_IP_REQUIRED  true: an API key with no registered address is refused (default false; SEBI: true)',
        '  SESSION_DAILY_END  HH:MM India time at which every session ends, whatever its TTL (default unset)',
        "  ALGO_GENERIC_ID  the exchanges' generic algo ID (ID, or NSE_EQ=ID,BSE_EQ=ID): SEBI's algo rules on (default unset)",
        '  ALGO_THRESHOLD_ORDERS_PER_SECOND (10)  orders a second per user and segment without a registered algo ID',
        '  TRUST_PROXY   false (default), true, or addresses/CIDR ranges of the proxies whose X-Forwarded-For is believed',
        '  MAX_STREAMS_PER_USER (10), MAX_STREAMS_PER_NODE (2000), MAX_CARTS_PER_USER (100)',
        '  MAX_PENDING_SOCKETS_PER_NODE (200), MAX_PENDING_SOCKETS_PER_ADDRESS (10)  socket connections not logged in yet',
        '  SHED_COMMIT_WAIT_MS (2000), SHED_EVENT_LOOP_DELAY_MS (1000)  load shedding of order entry; 0: off',
      ].join('\n'),
    );
  for (const build of [
    demoCommand,
    demoOfferCommand,
    usersCommand,
    apiKeysCommand,
    algosCommand,
    fundsCommand,
    ofsCommand,
    webhooksCommand,
    auditCommand,
    serveCommand,
    omsCommand,
    exchangeSimCommand,
  ]) {
    program.addCommand(build(io));
  }
  configureErrors(program, io);
  return program;
}

/** Runs one command line (without the `node ordergate` part); answers the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed the usage error, or the help when no command was given.
      if (error.code === 'commander.help' && error.exitCode !== 0)
        io.stderr.write('ordergate: missing command; see the list above\n');
      return error.exitCode;
    }
    io.stderr.write(`ordergate: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}
