/**
 * `ordergate demo`: everything needed to try the API at once. Creates the demo user if missing, a new API
 * key on every run (a key can only be shown when it is created), registers (or re-opens) the demo OFS issue
 * with both bidding windows open around now, logs in, and prints the credentials as a shell snippet of
 * ready-to-paste curl commands, or as one JSON object with --json.
 *
 * The demo's login is published, so it belongs on a database of its own: the command refuses a database
 * that holds any other user (unless --allow-other-users), and `ordergate users add` disables the demo user
 * when a real user joins it later.
 */
import { EXAMPLE_BID } from '../schemas/orders.js';
import { Command, InvalidArgumentError } from 'commander';
import { ApiError, Errors } from '../domain/errors.js';
import { availablePaise, type FundsAccount } from '../domain/funds/funds.js';
import type { OfsIssue } from '../domain/ofs/issue/issue.js';
import { formatRupees } from '../domain/ofs/rules.js';
import type { OfsIssueImport } from '../schemas/ofs-issue.js';
import { AdminError } from '../domain/errors.js';
import { DEMO_PASSWORD, DEMO_USER_ID, DEMO_USER_IDS } from '../services/admin.js';
import type { AuthService } from '../services/auth.js';
import { CliError, isoInstant, withWorkspace, type CliIo } from './context.js';
import { describeOfsIssue } from './ofs.js';

/** Rs 10,00,000: the demo user's first deposit, enough for many retail bids. */
export const DEMO_FUNDS_PAISE = 100_000_000;

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

/**
 * The demo issue in the import-file shape: both windows opened an hour ago and stay open a day, or close
 * `closeInMs` from now (to watch the allocation at close).
 */
export function demoOfsIssue(now: number, closeInMs?: number): OfsIssueImport {
  const opensAt = Math.floor(now / MINUTE) * MINUTE - HOUR;
  const closesAt = closeInMs === undefined ? opensAt + 25 * HOUR : now + closeInMs;
  return {
    exchange: 'NSE_EQ',
    scrip_token: 500112,
    symbol: 'SBIN',
    series: 'OF',
    floor_price: 100,
    tick_size: 0.05,
    offer_quantity: 1_000_000,
    retail_reserve_pct: 10,
    retail_cutoff_price: 101,
    allocation: 'PROPORTIONATE',
    non_retail_opens_at: isoInstant(opensAt),
    non_retail_closes_at: isoInstant(closesAt),
    retail_opens_at: isoInstant(opensAt),
    retail_closes_at: isoInstant(closesAt),
    // Allotted shares settle a minute after the allotment (not T+1), so that the demo shows bid to holding.
    settlement_delay_seconds: DEMO_SETTLEMENT_DELAY_SECONDS,
  };
}

/** How long after the allotment the demo issue's trades settle. */
export const DEMO_SETTLEMENT_DELAY_SECONDS = 60;

interface DemoCredentials {
  user_id: string;
  password: string;
  api_key: string;
  access_token: string;
  ofs_issues: OfsIssueImport[];
}

/** The base URL a client on this machine uses to reach the server configured by HOST and PORT. */
export function clientBaseUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A JSON body as one shell word; string values `$NAME` become the shell variable NAME. */
function shellJson(body: unknown): string {
  return shellQuote(JSON.stringify(body)).replace(/"\$([A-Z_]+)"/g, `"'"$$$1"'"`);
}

function curl(method: string, path: string, options: { apiKey?: boolean; body?: unknown } = {}): string {
  const headers = [
    ...(options.body === undefined ? [] : [`-H 'Content-Type: application/json'`]),
    ...(path.startsWith('/authentication/v1/user/session') ? [] : [`-H "Authorization: Bearer $TOKEN"`]),
    ...(options.apiKey ? [`-H "x-api-key: $API_KEY"`] : []),
  ];
  const lines = [`curl -sS -w '\\n' -X ${method} "$BASE${path}"`];
  if (headers.length > 0) lines.push(`  ${headers.join(' ')}`);
  if (options.body !== undefined) lines.push(`  -d ${shellJson(options.body)}`);
  return lines.join(' \\\n');
}

function cartLine(quantity: number) {
  return {
    scripDetail: {
      symbol: 'SBIN',
      _Series: 'EQ',
      _InstrumentName: 'EQUITY',
      _ExchangeName: 'NSE',
      MarketLot: 1,
      PriceTick: 0.05,
    },
    TransactionType: 'BUY',
    OrderType: 'RL',
    Quantity: quantity,
    Price: '500.00',
    ProductType: 'DELIVERY',
    validity: 'DAY',
  };
}

/** The text result: a shell snippet whose comments carry the credentials, followed by curl commands. */
function shellSnippet(
  credentials: DemoCredentials,
  issue: OfsIssue,
  funds: FundsAccount | undefined,
  operator: boolean,
  baseUrl: string,
  expiresAt: number,
): string {
  const raw = credentials.ofs_issues[0]!;
  const bid = {
    ...EXAMPLE_BID,
    scrip_info: {
      ...EXAMPLE_BID.scrip_info,
      exchange: raw.exchange,
      scrip_token: raw.scrip_token,
      symbol: raw.symbol,
      series: raw.series,
    },
    order_identifier: 'demo-bid',
  };
  const cart = (name: string, quantity: number) => ({
    ordercartName: name,
    orders: JSON.stringify([cartLine(quantity)]),
    version: '1',
    createdBy: credentials.user_id,
    modifiedBy: credentials.user_id,
    executedNoTime: 0,
  });
  const login = {
    user_id: credentials.user_id,
    login_type: 'PASSWORD',
    password: credentials.password,
    second_auth_type: '',
    second_auth: '',
    api_key: '$API_KEY',
    source: 'WEBAPI',
  };
  return [
    '# ordergate demo: a retail user, an API key, an access token and an OFS issue open for bids now.',
    '#',
    `#   user_id       ${credentials.user_id}`,
    `#   password      ${credentials.password}`,
    `#   api_key       ${credentials.api_key}   (shown only now; run \`ordergate demo\` again for another)`,
    `#   access_token  ${credentials.access_token}   (valid until ${isoInstant(expiresAt)})`,
    `#   OFS issue     ${describeOfsIssue(issue)}`,
    `#   funds         ${fundsLine(funds)}`,
    `#   operator      ${operatorLine(operator, raw)}`,
    '#',
    '# Each live bid blocks its value (quantity x price) out of the available funds; see them with',
    `# \`ordergate funds show ${credentials.user_id}\` or the balance call below.`,
    '#',
    '# With the server running (`npm start` or `ordergate serve`), paste the lines below into a shell.',
    '',
    `BASE=${shellQuote(baseUrl)}`,
    `TOKEN=${shellQuote(credentials.access_token)}`,
    `API_KEY=${shellQuote(credentials.api_key)}`,
    '',
    `# Place an OFS bid on ${raw.symbol}: 10 shares at Rs ${bid.price.toFixed(2)}.`,
    curl('POST', '/transactional/v1/orders/regular', { apiKey: true, body: bid }),
    '',
    '# Your live orders (orderStatus 1: live, 2: completed, -1: all), as ODIN lists them: data the orders,',
    '# metadata.total_records their count.',
    curl('GET', '/transactional/v1/orders?orderStatus=1'),
    '',
    '# Your funds: cash, blocked by live bids, available, and debited by allotments (rupees).',
    curl('GET', '/authentication/v1/user/balance'),
    '',
    '# Create an order cart and keep its id.',
    `CART=$(${curl('POST', '/transactional/v1/ordercart', { body: cart('demo cart', 1) })})`,
    'echo "$CART"',
    `ORDERCART_ID=$(printf '%s' "$CART" | sed -n 's/.*"ordercartId":"\\([^"]*\\)".*/\\1/p')`,
    '',
    '# Update it: a new name, 2 shares instead of 1.',
    curl('PUT', '/transactional/v1/ordercart', {
      body: { ...cart('demo cart, updated', 2), ordercartId: '$ORDERCART_ID' },
    }),
    '',
    '# Read it back.',
    curl('GET', '/transactional/v1/ordercart/$ORDERCART_ID'),
    '',
    '# Log in again (data.access_token in the answer is a new token).',
    curl('POST', '/authentication/v1/user/session', { body: login }),
    '',
  ].join('\n');
}

function operatorLine(operator: boolean, issue: OfsIssueImport): string {
  if (!operator) return "no (--allow-other-users: the published login does not see other users' bids)";
  return `yes: GET /operator/v1/ofs/${issue.exchange}/${issue.scrip_token}/book shows the issue's demand by price`;
}

function fundsLine(account: FundsAccount | undefined): string {
  if (account === undefined) return 'none: bids are not funds-checked';
  return `${formatRupees(account.cashPaise)} cash, ${formatRupees(availablePaise(account))} available`;
}

function parseCloseIn(value: string): number {
  const seconds = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= 10 && seconds <= 86_400))
    throw new InvalidArgumentError('--close-in takes a whole number of seconds from 10 to 86400.');
  return seconds;
}

export function demoCommand(io: CliIo): Command {
  return new Command('demo')
    .description(
      `create (if missing) the demo user "${DEMO_USER_ID}" with password "${DEMO_PASSWORD}" and ${formatRupees(DEMO_FUNDS_PAISE)} of funds, a new API key, ` +
        'and an OFS issue whose windows are open now; log in and print the credentials with curl commands',
    )
    .option('--json', 'print one JSON object {user_id, password, api_key, access_token, ofs_issues} instead')
    .option(
      '--close-in <seconds>',
      'close both bidding windows this many seconds from now (10 to 86400), to watch the allocation',
      parseCloseIn,
    )
    .option(
      '--allow-other-users',
      'run on a database that holds other users too (and enable the demo user if it was disabled): its known login then works there',
    )
    .addHelpText(
      'after',
      [
        '',
        'Without --json, stdout is a shell snippet: the credentials in comments, then shell variables',
        'BASE, TOKEN and API_KEY and curl commands that place a bid, read the funds, create, update and read a cart.',
        `A demo user without a funds account gets one with ${formatRupees(DEMO_FUNDS_PAISE)} deposited; one with an account keeps it as it is.`,
        'Every run creates a new API key and re-opens the demo issue (NSE_EQ 500112 SBIN OF) around now.',
        `The password is published: the demo refuses a database that holds users other than "${DEMO_USER_ID}" unless --allow-other-users,`,
        'and `ordergate users add` disables the demo user when a real user joins its database.',
      ].join('\n'),
    )
    .action(async (options: { json?: boolean; closeIn?: number; allowOtherUsers?: boolean }) => {
      await withWorkspace(io, async ({ config, users, admin, funds, auth }) => {
        if (!options.allowOtherUsers && (await users.existsOtherThan(DEMO_USER_IDS))) {
          throw new CliError(
            `this database holds users that \`ordergate demo\` did not create, and the demo adds a login whose password is published; run it on a database of its own, or pass --allow-other-users`,
          );
        }
        let created = false;
        if (!(await users.find(DEMO_USER_ID))) {
          try {
            await admin.addUser(DEMO_USER_ID, DEMO_PASSWORD, { category: 'RETAIL' });
            created = true;
          } catch (error) {
            // Another `ordergate demo` may have created it a moment ago: that one is as good.
            if (!(error instanceof AdminError) || !(await users.find(DEMO_USER_ID))) throw error;
          }
        }
        if (options.allowOtherUsers && (await users.find(DEMO_USER_ID))?.disabledAt != null) {
          await admin.enableUser(DEMO_USER_ID);
          io.stderr.write(`enabled user ${DEMO_USER_ID} (--allow-other-users)\n`);
        }
        // Log in first: a demo user whose password was changed must fail before anything is written.
        const login = await demoLogin(auth, DEMO_USER_ID, 'ordergate demo');

        io.stderr.write(created ? `created user ${DEMO_USER_ID}\n` : `user ${DEMO_USER_ID} exists: keeping it\n`);
        if (await admin.ensureDemoMemberData(DEMO_USER_ID))
          io.stderr.write(`recorded ${DEMO_USER_ID}'s member data (a made-up UCC and PAN)\n`);
        // An operator, so that the console shows the demo issue's book; not on a database with other users,
        // whose bids the published login must not see.
        const operator = !options.allowOtherUsers;
        await users.setOperator(DEMO_USER_ID, operator ? Date.now() : null);
        // A demo user with an account keeps it as it is: its bids may block or have spent part of it.
        if ((await funds.open(DEMO_USER_ID, DEMO_FUNDS_PAISE)) !== undefined) {
          io.stderr.write(`opened a funds account for ${DEMO_USER_ID} with ${formatRupees(DEMO_FUNDS_PAISE)}\n`);
        }
        const { account } = await funds.show(DEMO_USER_ID);
        const { apiKey } = await admin.createApiKey(DEMO_USER_ID);
        const rawIssue = demoOfsIssue(Date.now(), options.closeIn === undefined ? undefined : options.closeIn * 1000);
        const [issue] = await admin.importOfsIssues([rawIssue]);
        io.stderr.write(
          `registered OFS issue ${rawIssue.exchange} ${rawIssue.scrip_token} ${rawIssue.symbol}, open until ${rawIssue.retail_closes_at}\n`,
        );

        const credentials: DemoCredentials = {
          user_id: DEMO_USER_ID,
          password: DEMO_PASSWORD,
          api_key: apiKey,
          access_token: login.accessToken,
          ofs_issues: [rawIssue],
        };
        if (options.json) {
          io.stdout.write(`${JSON.stringify(credentials)}\n`);
        } else {
          io.stdout.write(
            shellSnippet(
              credentials,
              issue!,
              account,
              operator,
              clientBaseUrl(config.host, config.port),
              login.expiresAt,
            ),
          );
        }
      });
    });
}

/**
 * Logs a demo user in as the server would (the settings' second factor, daily end and API key rules: the
 * token printed is one the server could have issued), or the CLI's error saying why it cannot.
 */
export async function demoLogin(auth: AuthService, userId: string, command: string) {
  try {
    return await auth.login({ user_id: userId, password: DEMO_PASSWORD });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.kind === Errors.USER_DISABLED) {
      throw new CliError(`the user ${userId} is disabled; \`ordergate users enable ${userId}\` lets it log in again`);
    }
    if (error.kind === Errors.SECOND_FACTOR_NOT_ENROLLED) {
      throw new CliError(
        `this server takes a login only with a second factor (LOGIN_SECOND_FACTOR_REQUIRED=true), and the demo's user ${userId} logs in with its published password alone; run the demo where the setting is off, or exempt the user (\`ordergate users second-factor ${userId} --exempt\`) knowing that its password is published`,
      );
    }
    if (error.kind === Errors.LOGIN_API_KEY_REQUIRED) {
      throw new CliError(
        `this server takes a login only with an API key (LOGIN_REQUIRES_API_KEY=true); the demo logs in with the password alone: run it where the setting is off`,
      );
    }
    throw new CliError(
      `the existing user ${userId} cannot log in with the demo password "${DEMO_PASSWORD}" (${error.message}); it was not created by \`${command}\``,
    );
  }
}
