/**
 * `ordergate ofs import|green-shoe|proceed|cancel|employees|holidays`: register or update OFS offers (docs/design/ofs.md)
 * and issues of the one-listing format from a JSON array; the seller's green-shoe decision; the operator's
 * answer to an under-subscribed T day (go on, or cancel the offer); an offer's eligible employees.
 */
import { Command } from 'commander';
import { displayToken, unsafeTextIn } from '../domain/ofs/display-text.js';
import { formatPrice, type OfsIssue } from '../domain/ofs/issue/issue.js';
import { formatDiscount, offerPortions, type Offer, type PrintedPortions } from '../domain/ofs/offer/offer.js';
import { AdminError } from '../domain/errors.js';
import { parseOfsImport, type OfsImport } from '../schemas/ofs-import.js';
import { CliError, isoInstant, readJsonFile, withWorkspace, writeFields, type CliIo } from './context.js';
import { holidaysCommand } from './ofs-holidays.js';
import { ofsExchangeCommands } from './ofs-exchange.js';
import { reconcileCommand } from './ofs-reconcile.js';

/**
 * One line per issue: `<registered|updated>: EXCHANGE TOKEN SYMBOL SERIES name=value ...`. The stored texts
 * are printed as display tokens: one stored before the import refused control characters (issue 47 row 5)
 * is quoted and escaped, and cannot forge a line.
 */
export function describeOfsIssue(issue: OfsIssue): string {
  return [
    issue.exchange,
    issue.scripToken,
    displayToken(issue.symbol),
    displayToken(issue.series),
    `floor=${formatPrice(issue.floorPricePaise)}`,
    `tick=${formatPrice(issue.tickSizePaise)}`,
    `retail_cutoff=${issue.retailCutoffPricePaise === null ? 'none' : formatPrice(issue.retailCutoffPricePaise)}`,
    `offer_quantity=${issue.offerQuantity}`,
    `allocation=${issue.allocation}`,
    `non_retail=${isoInstant(issue.nonRetailOpensAt)}/${isoInstant(issue.nonRetailClosesAt)}`,
    `retail=${isoInstant(issue.retailOpensAt)}/${isoInstant(issue.retailClosesAt)}`,
    `settlement=${issue.settlementDelayMs === null ? 'T+1' : `${issue.settlementDelayMs / 1000}s`}`,
  ].join(' ');
}

/** One line per offer: `<registered|updated>: offer <offer_id> <symbol> name=value ...`, portions in shares; texts as in describeOfsIssue. */
export function describeOffer(offer: Offer): string {
  const portions = offerPortions(offer);
  const series = (text: string | null) => (text === null ? '-' : displayToken(text));
  const listings = offer.listings
    .map(
      (l) =>
        `${l.exchange}:${l.scripToken}(${[series(l.series.RETAIL), series(l.series.NON_RETAIL), series(l.series.EMPLOYEE)].join('/')})`,
    )
    .join(',');
  return [
    'offer',
    displayToken(offer.offerId),
    displayToken(offer.symbol),
    `listings=${listings}`,
    `floor=${formatPrice(offer.floorPricePaise)}`,
    `tick=${formatPrice(offer.tickSizePaise)}`,
    `base=${offer.baseQuantity}`,
    `green_shoe=${offer.greenShoeQuantity}(exercised=${offer.greenShoeExercised},${offer.greenShoeDecidedAt === null ? `default,decision_by=${isoInstant(offer.greenShoeDecisionBy)}` : 'decided'})`,
    `total=${portions.total}`,
    `retail_reserved=${portions.retailReserved}`,
    `non_retail=${portions.nonRetail}`,
    `mf_ic_reserved=${portions.mfIcReserved}`,
    `employee=${portions.employee}`,
    `single_bidder_cap=${portions.singleBidderCap}`,
    `portions=${portions.source}`,
    `retail_discount=${formatDiscount(offer.retailDiscount).replaceAll(' ', '')}`,
    `retail_price=${offer.retailAllocationPrice}`,
    `employee_discount=${formatDiscount(offer.employeeDiscount).replaceAll(' ', '')}`,
    `allocation=${offer.allocation}`,
    `t_day=${isoInstant(offer.tDay.opensAt)}/${isoInstant(offer.tDay.closesAt)}`,
    `t1_day=${isoInstant(offer.t1Day.opensAt)}/${isoInstant(offer.t1Day.closesAt)}`,
    `settlement=${offer.settlementDelayMs === null ? 'by-day' : `${offer.settlementDelayMs / 1000}s`}`,
  ].join(' ');
}

/** A whole number of shares from the command line, or a CliError naming the argument. */
function shares(text: string, name: string): number {
  if (!/^\d{1,15}$/.test(text))
    throw new CliError(`${name}: "${text}" is not a whole number of shares (or true or false)`);
  return Number(text);
}

/** The notice's printed portions from the green-shoe command's options: retail and non-retail together (the others if printed), or none. */
function printedOptions(options: Record<string, string | undefined>): Omit<PrintedPortions, 'greenShoe'> | undefined {
  const { retailReserved, nonRetail, mfIcReserved, employee } = options;
  if ([retailReserved, nonRetail, mfIcReserved, employee].every((value) => value === undefined)) return undefined;
  if (retailReserved === undefined || nonRetail === undefined) {
    throw new CliError(
      '--retail-reserved and --non-retail go together: every notice prints both (--mf-ic-reserved and --employee when it prints them)',
    );
  }
  return {
    retailReserved: shares(retailReserved, '--retail-reserved'),
    nonRetail: shares(nonRetail, '--non-retail'),
    mfIcReserved: mfIcReserved === undefined ? null : shares(mfIcReserved, '--mf-ic-reserved'),
    employee: employee === undefined ? null : shares(employee, '--employee'),
  };
}

export function ofsCommand(io: CliIo): Command {
  const ofs = new Command('ofs').description(
    'manage the registry of OFS offers and issues, the green shoe, an under-subscribed T day, employees and the holidays',
  );
  ofs
    .command('import')
    .description(
      'register or update OFS offers (entries with offer_id) and issues of the one-listing format from a JSON array; an offer with the same offer_id, or an issue with the same exchange and scrip_token, is updated; all or nothing',
    )
    .argument('<file.json>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout one line per entry, in file order. An offer:',
        '  <registered|updated>: offer <offer_id> <symbol> listings=<exchange>:<token>(<retail>/<non-retail>/<employee>),...',
        '    floor=<rupees> tick=<rupees> base=<n> green_shoe=<n>(exercised=<n>,default,decision_by=<instant>|decided) total=<n>',
        '    retail_reserved=<n> non_retail=<n> mf_ic_reserved=<n> employee=<n> single_bidder_cap=<n> portions=notice|computed',
        '    retail_discount=<d> retail_price=UNIFORM|BID',
        '    employee_discount=<d> allocation=<method> t_day=<opens_at>/<closes_at> t1_day=<opens_at>/<closes_at> settlement=<by-day|<seconds>s>',
        'An issue of the one-listing format:',
        '  <registered|updated>: <exchange> <scrip_token> <symbol> <series> floor=<rupees> tick=<rupees>',
        '    retail_cutoff=<rupees|none> offer_quantity=<n> allocation=<method>',
        '    non_retail=<opens_at>/<closes_at> retail=<opens_at>/<closes_at> settlement=<T+1|<seconds>s>',
        'A symbol or series with a space (BSE\'s "JK AGRI"), or stored with a character the import refuses, is',
        'printed in double quotes, escaped as JSON writes it.',
      ].join('\n'),
    )
    .action(async (file: string) => {
      const json = await readJsonFile(file);
      // Check the whole file before touching the database: a bad file writes nothing. No text of it may
      // hold a control, bidirectional or invisible character: the schema's patterns refuse them in the
      // identifiers too, but this names the character, which an editor may not show.
      const unsafe = unsafeTextIn(json);
      if (unsafe !== null) throw new CliError(`${file}: ${unsafe}`);
      const fileError = (error: unknown) =>
        error instanceof AdminError ? new CliError(`${file}: ${error.message}`) : error;
      let parsed: OfsImport;
      try {
        parsed = parseOfsImport(json);
      } catch (error) {
        throw fileError(error);
      }
      await withWorkspace(io, async ({ admin, issues: registry }) => {
        const known = new Set<string>();
        for (const issue of parsed.issues) {
          if (await registry.find(issue.exchange, issue.scripToken)) known.add(`${issue.exchange}:${issue.scripToken}`);
        }
        const { updatedOffers } = await admin.importParsed(parsed).catch((error: unknown) => {
          throw fileError(error);
        });
        for (const entry of parsed.order) {
          if ('offer' in entry) {
            io.stdout.write(
              `${updatedOffers.has(entry.offer.offerId) ? 'updated' : 'registered'}: ${describeOffer(entry.offer)}\n`,
            );
            continue;
          }
          const key = `${entry.issue.exchange}:${entry.issue.scripToken}`;
          io.stdout.write(`${known.has(key) ? 'updated' : 'registered'}: ${describeOfsIssue(entry.issue)}\n`);
          // A second entry for the same instrument in one file updates the first.
          known.add(key);
        }
      });
    });
  ofs
    .command('green-shoe')
    .description(
      "record the seller's green-shoe decision for an offer: the shares exercised, all (true), none (false) or any quantity in between; taken until the decision's deadline (green_shoe_decision_by, 17:00 IST on T by default), and the T allocation waits for it until then",
    )
    .argument('<offer_id>')
    .argument('<exercised>', 'true (all), false (none), or the shares exercised')
    .option('--retail-reserved <shares>', 'the retail reservation the notice prints for this decision')
    .option('--non-retail <shares>', 'the non-retail portion the notice prints')
    .option(
      '--mf-ic-reserved <shares>',
      'the MF/IC reservation the notice prints, if it prints one (at least 25 % of the total)',
    )
    .option('--employee <shares>', 'the employee portion the notice prints, if it prints one')
    .addHelpText(
      'after',
      "\n--retail-reserved and --non-retail go together, the other two with them (the notice's figures win over the computed ones; what it does not print is computed); without them the portions are computed." +
        "\nPrints on stdout the offer's line, as `ofs import` does, with its total and reservations for the decision.",
    )
    .action(async (offerId: string, exercised: string, options: Record<string, string | undefined>) => {
      const quantity = exercised === 'true' ? true : exercised === 'false' ? false : shares(exercised, '<exercised>');
      const printed = printedOptions(options);
      await withWorkspace(io, async ({ admin }) => {
        const offer = await admin.setGreenShoe(offerId, quantity, printed).catch((error: unknown) => {
          throw error instanceof AdminError ? new CliError(error.message) : error;
        });
        io.stdout.write(`updated: ${describeOffer(offer)}\n`);
      });
    });
  ofs
    .command('proceed')
    .description(
      'allot an under-subscribed T day anyway (non-retail demand short of the non-retail portion: the T allocation waits for this or for `ofs cancel`)',
    )
    .argument('<offer_id>')
    .action(async (offerId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        await admin.proceedOffer(offerId);
        io.stdout.write(`proceeding: ${offerId}: the T allocation runs at the next pass of the OMS\n`);
      });
    });
  ofs
    .command('cancel')
    .description(
      'cancel an offer (under-subscribed on T): every live bid is cancelled and its block released; allotments made stand',
    )
    .argument('<offer_id>')
    .action(async (offerId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        await admin.cancelOffer(offerId);
        io.stdout.write(`cancelled: ${offerId}: its live bids are cancelled at the next pass of the OMS\n`);
      });
    });
  const employees = new Command('employees').description(
    "an offer's eligible employees (registered by the operator until T+1 opens)",
  );
  employees
    .command('add')
    .description('register users as eligible employees of the offer; registering one again changes nothing')
    .argument('<offer_id>')
    .argument('<user_id...>')
    .addHelpText(
      'after',
      '\nPrints on stdout:\n  offer_id: <offer_id>\n  employees: <user_id>,<user_id>,...   (every registered employee, sorted)',
    )
    .action(async (offerId: string, userIds: string[]) => {
      await withWorkspace(io, async ({ admin }) => {
        await admin.addEmployees(offerId, userIds);
        writeFields(io, [
          ['offer_id', offerId],
          ['employees', (await admin.employees(offerId)).join(',')],
        ]);
      });
    });
  employees
    .command('remove')
    .description("take users off the offer's eligible employees")
    .argument('<offer_id>')
    .argument('<user_id...>')
    .addHelpText(
      'after',
      '\nPrints on stdout:\n  offer_id: <offer_id>\n  removed: <how many were registered>\n  employees: <user_id>,...',
    )
    .action(async (offerId: string, userIds: string[]) => {
      await withWorkspace(io, async ({ admin }) => {
        const removed = await admin.removeEmployees(offerId, userIds);
        writeFields(io, [
          ['offer_id', offerId],
          ['removed', String(removed)],
          ['employees', (await admin.employees(offerId)).join(',')],
        ]);
      });
    });
  employees
    .command('list')
    .description("print the offer's eligible employees")
    .argument('<offer_id>')
    .addHelpText('after', '\nPrints on stdout:\n  offer_id: <offer_id>\n  employees: <user_id>,...')
    .action(async (offerId: string) => {
      await withWorkspace(io, async ({ admin }) => {
        writeFields(io, [
          ['offer_id', offerId],
          ['employees', (await admin.employees(offerId)).join(',')],
        ]);
      });
    });
  ofs.addCommand(employees);
  ofs.addCommand(holidaysCommand(io));
  for (const command of ofsExchangeCommands(io)) ofs.addCommand(command);
  ofs.addCommand(reconcileCommand(io));
  return ofs;
}
