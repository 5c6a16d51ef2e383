/**
 * `ordergate ofs reconcile <offer_id>`: the exchange's book of each listing of the offer against
 * ordergate's orders (docs/reconciliation.md). This process never opens an exchange session of its own (a
 * login would end the running node's NSE session): it queues a request in the database, the node holding
 * the session runs it at its next pass, and the command waits for the report (`--timeout`) and prints it.
 * `--latest` prints the latest report of each listing without asking for a new one.
 */
import { Command, Option } from 'commander';
import { displayToken } from '../domain/ofs/display-text.js';
import { ReconciliationRepository, type ReconciliationReport } from '../store/ofs/reconciliations.js';
import { toReconciliationReport } from '../services/reconciliations.js';
import { CliError, isoInstant, withWorkspace, type CliIo } from './context.js';

/** How often the command looks whether its requests have run. */
const WAIT_POLL_MS = 250;

/** A report in lines: a head line, the counts, then one line per difference. */
export function describeReconciliation(report: ReconciliationReport): string {
  const lines = [
    `reconciliation: ${report.id} offer=${displayToken(report.offerId)} exchange=${report.exchange} symbol=${displayToken(report.symbol)} ` +
      `trigger=${report.trigger} state=${report.state} requested_at=${isoInstant(report.requestedAt)} ` +
      `run_at=${report.runAt === null ? '-' : isoInstant(report.runAt)} book_as_of=${report.bookAsOf === null ? '-' : isoInstant(report.bookAsOf)}`,
  ];
  if (report.result !== null) {
    const { ours, book, matched, inFlight, counts } = report.result;
    lines.push(
      `  ours=${ours} book=${book} matched=${matched} in_flight=${inFlight} differences=${report.differences.length}` +
        Object.entries(counts)
          .filter(([, count]) => count > 0)
          .map(([kind, count]) => ` ${kind}=${count}`)
          .join(''),
    );
    for (const d of report.differences)
      lines.push(
        `  ${d.kind} order=${d.orderId ?? '-'} bid=${d.exchangeOrderId ?? '-'}: ${d.message.replace(/\s*\n\s*/g, ' ')}`,
      );
  }
  if (report.error !== null) lines.push(`  error: ${report.error.replace(/\s*\n\s*/g, ' ')}`);
  if (report.note !== null) lines.push(`  note: ${report.note}`);
  return lines.join('\n') + '\n';
}

export function reconcileCommand(io: CliIo): Command {
  return new Command('reconcile')
    .description(
      "compare the exchange's book of each listing of an offer with ordergate's orders (missing at the exchange, unknown to us, status, quantity, price, bid id, carry-forward); changes nothing",
    )
    .argument('<offer_id>')
    .addOption(new Option('--exchange <exchange>', 'one listing only').choices(['NSE_EQ', 'BSE_EQ']))
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the node holding the exchange session to run it').default(
        '60',
      ),
    )
    .option('--latest', 'print the latest report of each listing, without asking for a new one')
    .option('--json', 'print the reports as the API answers them (a JSON array)')
    .addHelpText(
      'after',
      [
        '',
        'The node holding the exchange session (a running `ordergate serve` or `ordergate oms`) runs the request at',
        'its next pass; this command never logs in to the exchange. Prints on stdout, per listing:',
        '  reconciliation: <id> offer=<offer_id> exchange=<exchange> symbol=<symbol> trigger=<close-T|close-T1|operator>',
        '    state=<DONE|FAILED|QUEUED> requested_at=<instant> run_at=<instant|-> book_as_of=<instant|->',
        '    ours=<n> book=<n> matched=<n> in_flight=<n> differences=<n> <KIND>=<n> ...',
        '    <KIND> order=<order_id|-> bid=<exchange bid id|->: <the difference in words>',
        '    error: <why it failed>   (FAILED)',
        "    note: <how old the exchange's book is, when older than the run>",
        'Exit status 0 when every report ran (whether or not it found differences), 1 when one failed or was not',
        'run within --timeout (it stays queued). docs/reconciliation.md says what to do about each kind.',
      ].join('\n'),
    )
    .action(
      async (offerId: string, options: { exchange?: string; timeout: string; latest?: boolean; json?: boolean }) => {
        if (!/^\d{1,6}$/.test(options.timeout))
          throw new CliError(`--timeout: "${options.timeout}" is not whole seconds`);
        await withWorkspace(io, async ({ store }) => {
          const reports = new ReconciliationRepository(store.db);
          const listings = (await reports.listings(offerId)).filter(
            (listing) => options.exchange === undefined || listing.exchange === options.exchange,
          );
          if (listings.length === 0)
            throw new CliError(
              options.exchange === undefined
                ? `${offerId}: no such offer`
                : `${offerId}: the offer is not listed on ${options.exchange}`,
            );
          let shown: ReconciliationReport[];
          if (options.latest === true) {
            shown = [];
            for (const listing of listings) {
              const [latest] = await reports.list(offerId, { exchange: listing.exchange, limit: 1 });
              if (latest === undefined) io.stderr.write(`${offerId} ${listing.exchange}: no reconciliation yet\n`);
              else shown.push(latest);
            }
          } else {
            const requested = await reports.request(listings, 'cli', Date.now());
            shown = await waitFor(reports, requested, Number(options.timeout) * 1000);
          }
          io.stdout.write(
            options.json === true
              ? `${JSON.stringify(shown.map(toReconciliationReport), null, 2)}\n`
              : shown.map(describeReconciliation).join(''),
          );
          const queued = shown.filter((report) => report.state === 'QUEUED');
          if (queued.length > 0)
            throw new CliError(
              `not run within ${options.timeout} s: is a node holding the exchange session running (ordergate serve or oms)? ` +
                `The request stays queued; \`ordergate ofs reconcile ${offerId} --latest\` prints its report once run`,
            );
          if (shown.some((report) => report.state === 'FAILED'))
            throw new CliError('a reconciliation failed: see its error above');
        });
      },
    );
}

/** The requests, once each has run or the timeout has passed. */
async function waitFor(
  reports: ReconciliationRepository,
  requested: readonly ReconciliationReport[],
  timeoutMs: number,
): Promise<ReconciliationReport[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const current = await Promise.all(requested.map(async (r) => (await reports.find(r.id)) ?? r));
    if (current.every((report) => report.state !== 'QUEUED') || Date.now() >= until) return current;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
