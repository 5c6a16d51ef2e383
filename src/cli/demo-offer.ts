/**
 * `ordergate demo-offer`: a two-day OFS offer under SEBI's framework (docs/design/ofs.md) compressed into
 * minutes. Creates (if missing) three demo users, `demo` (retail, and an eligible employee of the offer),
 * `demo-nii` (NII) and `demo-mf` (a mutual fund, 100 % margin), each with funds, a new API key and a login;
 * registers the offer DEMO-OFS on NSE and BSE with day T open now for `--day-seconds` and day T+1 thirty
 * seconds after it for as long; and prints a shell snippet of timed curl commands that walk the offer
 * through: non-retail bids on T, the cut-off the T allocation finds, carry-forward and a revision, retail
 * and employee bids on T+1, and the allotments, funds and holdings after the T+1 allocation. With --json,
 * one JSON object with the credentials and the offer.
 *
 * The logins are published, as `ordergate demo`'s: the command refuses a database that holds users other
 * than the demo users (unless --allow-other-users), and `ordergate users add` disables them all when a real
 * user joins it later.
 */
import { Command, InvalidArgumentError } from 'commander';
import { availablePaise, type FundsAccount } from '../domain/funds/funds.js';
import type { MarginType, UserCategory } from '../domain/ofs/offer/offer.js';
import { formatRupees } from '../domain/ofs/rules.js';
import type { OfsOfferImport } from '../schemas/ofs-offer.js';
import { AdminError } from '../domain/errors.js';
import { DEMO_MF_USER_ID, DEMO_NII_USER_ID, DEMO_PASSWORD, DEMO_USER_ID, DEMO_USER_IDS } from '../services/admin.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import { CliError, isoInstant, withWorkspace, type CliIo, type Workspace } from './context.js';
import { clientBaseUrl, DEMO_FUNDS_PAISE, demoLogin } from './demo.js';
import { describeOffer } from './ofs.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** The first demo offer's id; a re-run after its T allocation registers DEMO-OFS-2, DEMO-OFS-3, ... */
export const DEMO_OFFER_ID = 'DEMO-OFS';
/** The length of each bidding day unless --day-seconds says otherwise. */
export const DEMO_OFFER_DAY_SECONDS = 120;
/** Between T close and T+1 open: the T allocation runs (within 10 s) and its cut-off can be read. */
export const DEMO_OFFER_BREAK_SECONDS = 30;
/** How long after each allotment the demo offer's trades settle (a real offer's settle by day). */
export const DEMO_OFFER_SETTLEMENT_SECONDS = 60;

/** A bidder of the demo offer: its user id and the category and margin type it bids with. */
interface DemoBidder {
  userId: string;
  category: UserCategory;
  marginType: MarginType;
}

export const DEMO_OFFER_BIDDERS: readonly DemoBidder[] = [
  { userId: DEMO_USER_ID, category: 'RETAIL', marginType: 'H' },
  { userId: DEMO_NII_USER_ID, category: 'NII', marginType: 'H' },
  { userId: DEMO_MF_USER_ID, category: 'MF', marginType: 'H' },
];

/** The n-th demo offer's id: DEMO-OFS, then DEMO-OFS-2, DEMO-OFS-3, ... */
export function demoOfferId(n: number): string {
  return n === 1 ? DEMO_OFFER_ID : `${DEMO_OFFER_ID}-${n}`;
}

/**
 * The n-th demo offer in the import-file shape (schemas/ofs-offer.ts). T opens at the current minute and
 * closes `daySeconds` from `now` (rounded up to a second); T+1 opens DEMO_OFFER_BREAK_SECONDS later and
 * lasts as long. Each offer has listings of its own (NSE_EQ 700100 + n, BSE_EQ 800100 + n): a listing
 * belongs to one offer.
 */
export function demoOfferImport(now: number, daySeconds: number = DEMO_OFFER_DAY_SECONDS, n = 1): OfsOfferImport {
  const tOpensAt = Math.floor(now / MINUTE) * MINUTE;
  const tClosesAt = Math.ceil((now + daySeconds * SECOND) / SECOND) * SECOND;
  const t1OpensAt = tClosesAt + DEMO_OFFER_BREAK_SECONDS * SECOND;
  return {
    offer_id: demoOfferId(n),
    symbol: 'DEMOCO',
    listings: [
      { exchange: 'NSE_EQ', scrip_token: 700_100 + n, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
      { exchange: 'BSE_EQ', scrip_token: 800_100 + n, series: { RETAIL: 'A', NON_RETAIL: 'A' } },
    ],
    floor_price: 100,
    tick_size: 0.05,
    base_quantity: 10_000,
    green_shoe_quantity: 2_000,
    green_shoe_exercised: false,
    // The demo's seller decides at T's close: the T allocation runs at once (the default deadline, 17:00 IST, could be hours away).
    green_shoe_decision_by: isoInstant(tClosesAt),
    retail_reserve_pct: 12.5,
    retail_discount: { rupees: 2.5 },
    retail_allocation_price: 'UNIFORM',
    employee_quantity: 500,
    employee_discount: { pct: 5 },
    allocation: 'PRICE_PRIORITY',
    t_day: { opens_at: isoInstant(tOpensAt), closes_at: isoInstant(tClosesAt) },
    t1_day: { opens_at: isoInstant(t1OpensAt), closes_at: isoInstant(t1OpensAt + daySeconds * SECOND) },
    settlement_delay_seconds: DEMO_OFFER_SETTLEMENT_SECONDS,
  };
}

/** An order-entry body (POST /transactional/v1/orders/regular). */
export type DemoBid = Record<string, unknown>;

/** A bid on the offer's listing on `exchange`, in the series of `category` there. */
function offerBid(
  offer: OfsOfferImport,
  exchange: 'NSE_EQ' | 'BSE_EQ',
  category: 'RETAIL' | 'NON_RETAIL' | 'EMPLOYEE',
  orderType: 'RL' | 'RL-MKT',
  quantity: number,
  price: number,
  identifier: string,
): DemoBid {
  const listing = offer.listings.find((l) => l.exchange === exchange)!;
  return {
    scrip_info: {
      exchange,
      scrip_token: listing.scrip_token,
      symbol: offer.symbol,
      series: listing.series[category],
      expiry_date: '',
      strike_price: '',
      option_type: '',
    },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: orderType,
    quantity: String(quantity),
    price,
    trigger_price: null,
    disclosed_quantity: 0,
    validity: '',
    validity_days: 0,
    is_amo: false,
    order_identifier: identifier,
  };
}

/**
 * The walk-through's bids, as the snippet places them: on T demo-nii 6,000 at 101.00 on NSE (series IS)
 * and demo-mf 6,250 at 100.50 on BSE (series A); on T+1 demo 100 at the cut-off on NSE (RS) and, as an
 * employee, 50 at the cut-off on NSE (ES).
 */
export function demoOfferBids(offer: OfsOfferImport): {
  nii: DemoBid;
  mf: DemoBid;
  retail: DemoBid;
  employee: DemoBid;
} {
  return {
    nii: offerBid(offer, 'NSE_EQ', 'NON_RETAIL', 'RL', 6_000, 101, 'nii-t'),
    mf: offerBid(offer, 'BSE_EQ', 'NON_RETAIL', 'RL', 6_250, 100.5, 'mf-t'),
    retail: offerBid(offer, 'NSE_EQ', 'RETAIL', 'RL-MKT', 100, 0, 'retail'),
    employee: offerBid(offer, 'NSE_EQ', 'EMPLOYEE', 'RL-MKT', 50, 0, 'employee'),
  };
}

/** demo-nii's revision of its carried-forward bid on T+1 (PUT .../orders/regular/NSE_EQ/{order_id}): 101.50. */
export const DEMO_NII_REVISION = {
  order_type: 'RL',
  quantity: '6000',
  price: 101.5,
  disclosed_quantity: 0,
  validity: '',
  validity_days: 0,
  trigger_price: null,
};

/** One demo user's credentials, as --json prints them. */
interface DemoOfferUser {
  user_id: string;
  password: string;
  api_key: string;
  access_token: string;
  category: UserCategory;
}

/** What the command learnt about one demo user, for the snippet's comments. */
interface BidderState {
  credentials: DemoOfferUser;
  account: FundsAccount | undefined;
  expiresAt: number;
}

/** The four instants of the offer's two days. */
interface Timeline {
  tOpensAt: number;
  tClosesAt: number;
  t1OpensAt: number;
  t1ClosesAt: number;
}

function timelineOf(offer: OfsOfferImport): Timeline {
  return {
    tOpensAt: Date.parse(offer.t_day.opens_at),
    tClosesAt: Date.parse(offer.t_day.closes_at),
    t1OpensAt: Date.parse(offer.t1_day.opens_at),
    t1ClosesAt: Date.parse(offer.t1_day.closes_at),
  };
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The shell variables' suffix for a user: demo-nii -> DEMO_NII (TOKEN_DEMO_NII, API_KEY_DEMO_NII). */
const shellName = (userId: string) => userId.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** A curl command as `userId` (its TOKEN_ variable, and its API_KEY_ one with `apiKey`). */
function curl(
  method: string,
  path: string,
  userId: string,
  options: { apiKey?: boolean; body?: unknown } = {},
): string {
  const headers = [
    ...(options.body === undefined ? [] : [`-H 'Content-Type: application/json'`]),
    `-H "Authorization: Bearer $TOKEN_${shellName(userId)}"`,
    ...(options.apiKey ? [`-H "x-api-key: $API_KEY_${shellName(userId)}"`] : []),
  ];
  const lines = [`curl -sS -w '\\n' -X ${method} "$BASE${path}"`, `  ${headers.join(' ')}`];
  if (options.body !== undefined) lines.push(`  -d ${shellQuote(JSON.stringify(options.body))}`);
  return lines.join(' \\\n');
}

/** A step's heading: when it applies, and the line that waits for it when the snippet is pasted whole. */
function at(instant: number, what: string): string[] {
  return [`# ---- at ${isoInstant(instant)}: ${what}`, `wait_until ${Math.ceil(instant / SECOND)}`];
}

/** What the walk-through's numbers come to, by the allocation rules (docs/design/ofs.md). */
const EXPECTED_OUTCOME = [
  '# What to expect, on a database where the demo users had no bids and no funds account before:',
  '#   The offer: total 10,000 (the green shoe of 2,000 is not exercised); retail 12.5 % = 1,250; non-retail',
  '#   8,750, of which 2,500 reserved for MF/IC; single-bidder cap floor(25 % of 10,000) = 2,500; 500 for',
  '#   employees on top. Each user has Rs 10,00,000 of cash.',
  '#   T: the indicative price is the VWAP of the bids, 100.74 for 12,250 shares.',
  '#   T close: the cap trims demo-nii to 2,500 (an MF is exempt): the 8,750 the allocation takes cover the',
  '#   8,750 exactly, so no operator is asked, and all are allotted at their own prices: demo-mf 6,250 at',
  '#   100.50 (EXECUTED; 2,500 of them from the MF/IC reservation), demo-nii 2,500 at 101.00 (PENDING, 3,500',
  '#   left to carry forward; their funds are released until it does). Not oversubscribed, the T-day cut-off',
  '#   is the floor price, 100.00 (retail may bid at the floor).',
  "#   T+1 close: demo's 100 retail shares at 100.00 - 2.50 = 97.50 (UNIFORM), its 50 employee shares at",
  "#   100.00 less 5 % = 95.00. demo-nii's carried-forward 3,500 at 101.50 (blocked again when carried",
  '#   forward) get nothing: it holds the cap already, and its order ends EXECUTED with the 2,500. The rest',
  '#   returns to the seller.',
  '#   Funds: debited demo-nii Rs 2,52,500.00, demo-mf Rs 6,28,125.00, demo Rs 14,500.00; nothing blocked.',
  '#   Holdings, 60 s after each allotment: demo 150 DEMOCO (average 96.67), demo-nii 2,500, demo-mf 6,250.',
];

/** The text result: the credentials and the timeline in comments, then the timed curl commands. */
function shellSnippet(
  offer: OfsOfferImport,
  bidders: readonly BidderState[],
  operator: boolean,
  baseUrl: string,
): string {
  const time = timelineOf(offer);
  const bids = demoOfferBids(offer);
  const nse = offer.listings.find((l) => l.exchange === 'NSE_EQ')!;
  const bse = offer.listings.find((l) => l.exchange === 'BSE_EQ')!;
  const offerPath = `/transactional/v1/ofs/offers/${offer.offer_id}`;
  const niiOrder = `/transactional/v1/orders/regular/NSE_EQ/$NII_ORDER_ID`;
  const user = (b: BidderState) => [
    `#   ${b.credentials.user_id.padEnd(9)} ${b.credentials.category.padEnd(7)} password ${b.credentials.password}`,
    `#     api_key       ${b.credentials.api_key}   (shown only now)`,
    `#     access_token  ${b.credentials.access_token}   (valid until ${isoInstant(b.expiresAt)})`,
    `#     funds         ${fundsLine(b.account)}`,
  ];
  return [
    `# ordergate demo-offer: the OFS offer ${offer.offer_id} (${offer.symbol}), two bidding days of ${(time.t1ClosesAt - time.t1OpensAt) / SECOND} s, three bidders.`,
    '#',
    `#   offer     ${offer.offer_id}: NSE_EQ ${nse.scrip_token} (series RS retail, IS non-retail, ES employees), BSE_EQ ${bse.scrip_token} (series A);`,
    `#             floor ${offer.floor_price.toFixed(2)}, tick ${offer.tick_size.toFixed(2)}, base 10,000, price priority, settles ${DEMO_OFFER_SETTLEMENT_SECONDS} s after each allotment`,
    `#   T         ${isoInstant(time.tOpensAt)} to ${isoInstant(time.tClosesAt)}: non-retail bids`,
    `#   T+1       ${isoInstant(time.t1OpensAt)} to ${isoInstant(time.t1ClosesAt)}: retail, employee and carried-forward bids`,
    `#   operator  ${operatorLine(operator, offer)}`,
    '#',
    ...bidders.flatMap(user),
    '#',
    ...EXPECTED_OUTCOME,
    '#',
    '# With the server running (`npm start` or `ordergate serve`; its OMS runs both allocations), paste the',
    '# lines below into a shell: each step waits for its instant, or paste the steps one by one when they apply.',
    '',
    `BASE=${shellQuote(baseUrl)}`,
    ...bidders.flatMap((b) => [
      `TOKEN_${shellName(b.credentials.user_id)}=${shellQuote(b.credentials.access_token)}`,
      `API_KEY_${shellName(b.credentials.user_id)}=${shellQuote(b.credentials.api_key)}`,
    ]),
    '# Waits until an instant (seconds since 1970).',
    'wait_until() { while [ "$(date +%s)" -lt "$1" ]; do sleep 1; done; }',
    '',
    ...at(time.tOpensAt, `T is open until ${isoInstant(time.tClosesAt)}`),
    `# demo-nii (NII) bids 6,000 at 101.00 on NSE, series IS; keep its order id.`,
    `NII_BID=$(${curl('POST', '/transactional/v1/orders/regular', DEMO_NII_USER_ID, { apiKey: true, body: bids.nii })})`,
    'echo "$NII_BID"',
    `NII_ORDER_ID=$(printf '%s' "$NII_BID" | sed -n 's/.*"orderId":"\\([^"]*\\)".*/\\1/p')`,
    '# demo-mf (MF, 100 % margin) bids 6,250 at 100.50 on BSE, series A; keep its order id.',
    `MF_BID=$(${curl('POST', '/transactional/v1/orders/regular', DEMO_MF_USER_ID, { apiKey: true, body: bids.mf })})`,
    'echo "$MF_BID"',
    `MF_ORDER_ID=$(printf '%s' "$MF_BID" | sed -n 's/.*"orderId":"\\([^"]*\\)".*/\\1/p')`,
    '# The indicative price the exchange publishes (within a second): "indicative":{"price":100.74,"quantity":12250,...}.',
    'sleep 2',
    curl('GET', offerPath, DEMO_NII_USER_ID),
    '',
    ...at(time.tClosesAt + 10 * SECOND, 'T has closed and the T allocation has run'),
    '# The offer: "state":"T_ALLOCATED","t_cutoff_price":100 (the floor: non-retail was not oversubscribed).',
    curl('GET', offerPath, DEMO_NII_USER_ID),
    '# demo-nii\'s order book: "status":"PENDING","traded_quantity":2500,"traded_price":"101.00" (the cap);',
    '# its funds: "blocked":"0.00" (the 3,500 left block nothing until carried forward), "debited":"252500.00".',
    curl('GET', '/transactional/v1/orders', DEMO_NII_USER_ID),
    curl('GET', '/authentication/v1/user/balance', DEMO_NII_USER_ID),
    '# demo-mf\'s: "status":"EXECUTED","traded_quantity":6250,"traded_price":"100.50".',
    curl('GET', '/transactional/v1/orders', DEMO_MF_USER_ID),
    "# The two links: demo-nii's bid went to NSE over the e-OFS wire, demo-mf's to BSE as an iBBS upload file.",
    '# demo-mf\'s history names the files: "Waiting for the exchange\'s answer (sent in upload file OFSBID_SIM01_...)",',
    '# then "BSE allotted 6250 of 6250 at Rs 100.50 (allocation file ALLOC_SIM01_...)".',
    curl('GET', '/transactional/v1/orders/$MF_ORDER_ID', DEMO_MF_USER_ID),
    ...(operator
      ? [
          "# The operator's book (demo is an operator): allotments per category and listing, the open demand by price.",
          curl('GET', `/operator/v1/ofs/offers/${offer.offer_id}/book`, DEMO_USER_ID),
          "# Reconciliation: each exchange's book of our bids against ordergate's orders (it also runs by itself",
          '# after each close); a few seconds later, per listing: "state":"DONE",...,"matched":1,"differences":[].',
          curl('POST', `/operator/v1/ofs/offers/${offer.offer_id}/reconciliations`, DEMO_USER_ID),
          'sleep 5',
          curl('GET', `/operator/v1/ofs/offers/${offer.offer_id}/reconciliations?limit=2`, DEMO_USER_ID),
        ]
      : []),
    '',
    ...at(time.t1OpensAt + 2 * SECOND, `T+1 is open until ${isoInstant(time.t1ClosesAt)}`),
    '# demo-nii carries the rest of its bid forward (its funds are blocked again), and revises it to 101.50.',
    curl('POST', `${niiOrder}/carry_forward`, DEMO_NII_USER_ID, { apiKey: true }),
    curl('PUT', niiOrder, DEMO_NII_USER_ID, { apiKey: true, body: DEMO_NII_REVISION }),
    '# demo bids as retail at the cut-off (RL-MKT, price 0) for 100 shares on NSE, series RS ...',
    curl('POST', '/transactional/v1/orders/regular', DEMO_USER_ID, { apiKey: true, body: bids.retail }),
    '# ... and as an eligible employee, at the cut-off, for 50 shares on NSE, series ES.',
    curl('POST', '/transactional/v1/orders/regular', DEMO_USER_ID, { apiKey: true, body: bids.employee }),
    '# Both are blocked at the cut-off 100.00: "blocked":"15000.00".',
    'sleep 2',
    curl('GET', '/authentication/v1/user/balance', DEMO_USER_ID),
    '',
    ...at(time.t1ClosesAt + 10 * SECOND, 'T+1 has closed and the T+1 allocation has run'),
    '# The offer: "state":"ALLOCATED","retail_cutoff_price":100,"retail_price":97.5,"employee_price":95.',
    curl('GET', offerPath, DEMO_USER_ID),
    '# demo\'s bids: EXECUTED, 100 at "97.50" and 50 at "95.00"; demo-nii\'s: EXECUTED with its 2,500 (the cap).',
    curl('GET', '/transactional/v1/orders', DEMO_USER_ID),
    curl('GET', '/transactional/v1/orders', DEMO_NII_USER_ID),
    '# The allotments as trades, and the funds: "debited":"14500.00" for demo, "252500.00" for demo-nii.',
    curl('GET', '/transactional/v1/trades', DEMO_USER_ID),
    curl('GET', '/authentication/v1/user/balance', DEMO_USER_ID),
    curl('GET', '/authentication/v1/user/balance', DEMO_NII_USER_ID),
    '',
    ...at(time.t1ClosesAt + (10 + DEMO_OFFER_SETTLEMENT_SECONDS + 5) * SECOND, 'the allotments have settled'),
    '# Holdings: demo "quantity":150,"average_price":"96.67"; demo-nii 2500 at "101.00"; demo-mf 6250 at "100.50".',
    curl('GET', '/transactional/v1/portfolio/holdings', DEMO_USER_ID),
    curl('GET', '/transactional/v1/portfolio/holdings', DEMO_NII_USER_ID),
    curl('GET', '/transactional/v1/portfolio/holdings', DEMO_MF_USER_ID),
    '',
  ].join('\n');
}

function operatorLine(operator: boolean, offer: OfsOfferImport): string {
  if (!operator) return "demo is no operator (--allow-other-users: the published login does not see other users' bids)";
  return `demo: GET /operator/v1/ofs/offers/${offer.offer_id}/book shows the offer's book`;
}

function fundsLine(account: FundsAccount | undefined): string {
  if (account === undefined) return 'none: bids are not funds-checked';
  return `${formatRupees(account.cashPaise)} cash, ${formatRupees(availablePaise(account))} available`;
}

function parseDaySeconds(value: string): number {
  const seconds = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= 30 && seconds <= 86_400))
    throw new InvalidArgumentError('--day-seconds takes a whole number of seconds from 30 to 86400.');
  return seconds;
}

/** Creates the demo user if missing (another run may create it at the same moment); true when this did. */
async function ensureUser({ users, admin }: Workspace, bidder: DemoBidder): Promise<boolean> {
  if (await users.find(bidder.userId)) return false;
  try {
    await admin.addUser(bidder.userId, DEMO_PASSWORD, { category: bidder.category, marginType: bidder.marginType });
    return true;
  } catch (error) {
    if (!(error instanceof AdminError) || !(await users.find(bidder.userId))) throw error;
    return false;
  }
}

/** Logs the demo user in with the published password; a CliError says why it cannot. */
/**
 * The first demo offer this run may (re)register: one that does not exist, or whose T allocation has not
 * run (its terms may still change) and that was not cancelled.
 */
async function freeDemoOffer(offers: OfsOfferRepository): Promise<number> {
  for (let n = 1; n <= 1000; n++) {
    const registration = await offers.find(demoOfferId(n));
    if (
      registration === undefined ||
      (registration.progress.tAllocatedAt === null && registration.progress.cancelledAt === null)
    )
      return n;
  }
  throw new CliError(
    `offers ${demoOfferId(1)} to ${demoOfferId(1000)} have all been allotted; run the demo on a database of its own`,
  );
}

export function demoOfferCommand(io: CliIo): Command {
  return new Command('demo-offer')
    .description(
      `create (if missing) the demo users "${DEMO_USER_ID}" (RETAIL, an eligible employee), "${DEMO_NII_USER_ID}" (NII) and "${DEMO_MF_USER_ID}" (MF) with password "${DEMO_PASSWORD}" ` +
        `and ${formatRupees(DEMO_FUNDS_PAISE)} of funds each, new API keys, and the OFS offer ${DEMO_OFFER_ID} whose day T opens now and day T+1 minutes later; ` +
        'log them in and print a timed walk-through of both days as curl commands',
    )
    .option(
      '--json',
      'print one JSON object {users: [{user_id, password, api_key, access_token, category}], offer} instead',
    )
    .option(
      '--day-seconds <seconds>',
      `the length of each bidding day, T and T+1 (30 to 86400; default ${DEMO_OFFER_DAY_SECONDS})`,
      parseDaySeconds,
    )
    .option(
      '--allow-other-users',
      'run on a database that holds other users too (and enable the demo users if they were disabled): their known logins then work there',
    )
    .addHelpText(
      'after',
      [
        '',
        `T opens at the current minute and closes --day-seconds from now; T+1 opens ${DEMO_OFFER_BREAK_SECONDS} s after T closes and lasts as long.`,
        'The OMS worker of `ordergate serve` (or `ordergate oms`) runs the T allocation at T close and the T+1 allocation at T+1 close;',
        `allotments settle ${DEMO_OFFER_SETTLEMENT_SECONDS} s later. The timeline goes to stderr.`,
        'Without --json, stdout is a shell snippet: the credentials, the timeline and the expected outcome in comments, then shell',
        'variables BASE, TOKEN_<USER> and API_KEY_<USER> and curl commands for each step, each after a line that waits for its instant.',
        `Every run creates new API keys and re-registers ${DEMO_OFFER_ID} around now, or, once its T allocation has run, the next free`,
        `${DEMO_OFFER_ID}-2, ${DEMO_OFFER_ID}-3, ... (NSE_EQ 700100 + n, BSE_EQ 800100 + n).`,
        `The password is published: the command refuses a database that holds users other than ${DEMO_USER_IDS.map((id) => `"${id}"`).join(', ')}`,
        'unless --allow-other-users, and `ordergate users add` disables the demo users when a real user joins its database.',
      ].join('\n'),
    )
    .action(async (options: { json?: boolean; daySeconds?: number; allowOtherUsers?: boolean }) => {
      await withWorkspace(io, async (workspace) => {
        const { config, users, admin, offers, auth } = workspace;
        if (!options.allowOtherUsers && (await users.existsOtherThan(DEMO_USER_IDS))) {
          throw new CliError(
            'this database holds users that the demos did not create, and `ordergate demo-offer` adds logins whose password is published; run it on a database of its own, or pass --allow-other-users',
          );
        }
        const created = new Set<string>();
        for (const bidder of DEMO_OFFER_BIDDERS) {
          if (await ensureUser(workspace, bidder)) created.add(bidder.userId);
          if (options.allowOtherUsers && (await users.find(bidder.userId))?.disabledAt != null) {
            await admin.enableUser(bidder.userId);
            io.stderr.write(`enabled user ${bidder.userId} (--allow-other-users)\n`);
          }
        }
        // Log in first: a demo user whose password was changed must fail before anything else is written.
        const logins = [];
        for (const bidder of DEMO_OFFER_BIDDERS)
          logins.push(await demoLogin(auth, bidder.userId, 'ordergate demo-offer'));

        const bidders: BidderState[] = [];
        for (const [i, bidder] of DEMO_OFFER_BIDDERS.entries()) {
          bidders.push(await prepareBidder(io, workspace, bidder, created.has(bidder.userId), logins[i]!));
        }
        // An operator, so that the console shows the offer's book; not on a database with other users,
        // whose bids the published login must not see.
        const operator = !options.allowOtherUsers;
        await users.setOperator(DEMO_USER_ID, operator ? Date.now() : null);

        const offer = demoOfferImport(
          Date.now(),
          options.daySeconds ?? DEMO_OFFER_DAY_SECONDS,
          await freeDemoOffer(offers),
        );
        const imported = await admin.importOfs([offer]);
        io.stderr.write(
          `${imported.updatedOffers.has(offer.offer_id) ? 'updated' : 'registered'}: ${describeOffer(imported.offers[0]!)}\n`,
        );
        await admin.addEmployees(offer.offer_id, [DEMO_USER_ID]);
        io.stderr.write(`registered ${DEMO_USER_ID} as an eligible employee of ${offer.offer_id}\n`);
        const time = timelineOf(offer);
        io.stderr.write(
          `T   opens ${isoInstant(time.tOpensAt)}, closes ${isoInstant(time.tClosesAt)}: non-retail bids (${DEMO_NII_USER_ID}, ${DEMO_MF_USER_ID})\n`,
        );
        io.stderr.write(
          `T+1 opens ${isoInstant(time.t1OpensAt)}, closes ${isoInstant(time.t1ClosesAt)}: retail, employee (${DEMO_USER_ID}) and carried-forward bids\n`,
        );

        if (options.json) {
          io.stdout.write(`${JSON.stringify({ users: bidders.map((b) => b.credentials), offer })}\n`);
        } else {
          io.stdout.write(shellSnippet(offer, bidders, operator, clientBaseUrl(config.host, config.port)));
        }
      });
    });
}

/**
 * Readies a logged-in demo user: its category (an operator may have changed it), a funds account if it has
 * none (one it has is kept as it is: its bids may block or have spent part of it), and a new API key.
 */
async function prepareBidder(
  io: CliIo,
  { users, admin, funds }: Workspace,
  bidder: DemoBidder,
  created: boolean,
  login: { accessToken: string; expiresAt: number },
): Promise<BidderState> {
  io.stderr.write(
    created ? `created user ${bidder.userId} (${bidder.category})\n` : `user ${bidder.userId} exists: keeping it\n`,
  );
  const user = (await users.find(bidder.userId))!;
  if (user.offerCategory !== bidder.category || user.marginType !== bidder.marginType) {
    await admin.setCategory(bidder.userId, bidder.category, bidder.marginType);
    io.stderr.write(`set ${bidder.userId}'s category to ${bidder.category}, margin ${bidder.marginType}\n`);
  }
  if (await admin.ensureDemoMemberData(bidder.userId))
    io.stderr.write(`recorded ${bidder.userId}'s member data (a made-up UCC and PAN)\n`);
  if ((await funds.open(bidder.userId, DEMO_FUNDS_PAISE)) !== undefined) {
    io.stderr.write(`opened a funds account for ${bidder.userId} with ${formatRupees(DEMO_FUNDS_PAISE)}\n`);
  }
  const { account } = await funds.show(bidder.userId);
  const { apiKey } = await admin.createApiKey(bidder.userId);
  return {
    credentials: {
      user_id: bidder.userId,
      password: DEMO_PASSWORD,
      api_key: apiKey,
      access_token: login.accessToken,
      category: bidder.category,
    },
    account,
    expiresAt: login.expiresAt,
  };
}
