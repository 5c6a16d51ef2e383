/**
 * `ordergate funds deposit|withdraw|show`: users' funds accounts (docs/design/funds.md). Amounts are rupees
 * ("250000" or "250000.50"); a user's first deposit opens the account, and from then on the OMS checks the
 * user's bids against the available funds.
 */
import { Command } from 'commander';
import { availablePaise, type FundsAccount, type FundsLedgerEntry } from '../domain/funds/funds.js';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import { isoInstant, withWorkspace, writeFields, type CliIo } from './context.js';

const ACCOUNT_HELP = [
  '  user_id: <user_id>',
  '  funds_checked: yes|no   (no: the user has no funds account; bids are not funds-checked)',
  '  cash: <rupees>          (deposits - withdrawals - debits)',
  '  blocked: <rupees>       (held by live bids)',
  '  available: <rupees>     (cash - blocked)',
  '  debited: <rupees>       (every allotment so far)',
];

const AMOUNT_HELP = 'rupees with at most two decimals, e.g. 250000 or 250000.50';

function writeAccount(io: CliIo, userId: string, account: FundsAccount | undefined): void {
  const amount = (paise: number | undefined) => formatPrice(paise ?? 0);
  writeFields(io, [
    ['user_id', userId],
    ['funds_checked', account === undefined ? 'no' : 'yes'],
    ['cash', amount(account?.cashPaise)],
    ['blocked', amount(account?.blockedPaise)],
    ['available', amount(account && availablePaise(account))],
    ['debited', amount(account?.debitedPaise)],
  ]);
}

const ledgerLine = (entry: FundsLedgerEntry) =>
  `${entry.id} ${isoInstant(entry.at)} ${entry.kind} ${formatPrice(entry.amountPaise)} order=${entry.orderId ?? '-'}\n`;

export function fundsCommand(io: CliIo): Command {
  const funds = new Command('funds').description(
    "users' funds: bids of a user with a funds account block their value (see docs/operations.md: Funds)",
  );
  funds
    .command('deposit')
    .description("add cash to a user's funds account, opening it (the user becomes funds-checked) if missing")
    .argument('<user_id>')
    .argument('<amount>', AMOUNT_HELP)
    .addHelpText('after', ['', 'Prints on stdout the account after the deposit:', ...ACCOUNT_HELP].join('\n'))
    .action(async (userId: string, amount: string) => {
      await withWorkspace(io, async (workspace) => {
        const account = await workspace.funds.deposit(userId, amount);
        writeAccount(io, userId, account);
        io.stderr.write(`deposited Rs ${amount} for ${userId}\n`);
      });
    });
  funds
    .command('withdraw')
    .description("take cash out of a user's available funds; refused, changing nothing, beyond them")
    .argument('<user_id>')
    .argument('<amount>', AMOUNT_HELP)
    .addHelpText('after', ['', 'Prints on stdout the account after the withdrawal:', ...ACCOUNT_HELP].join('\n'))
    .action(async (userId: string, amount: string) => {
      await withWorkspace(io, async (workspace) => {
        const account = await workspace.funds.withdraw(userId, amount);
        writeAccount(io, userId, account);
        io.stderr.write(`withdrew Rs ${amount} for ${userId}\n`);
      });
    });
  funds
    .command('show')
    .description("a user's funds account and its latest ledger entries")
    .argument('<user_id>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        ...ACCOUNT_HELP,
        'then the latest 20 ledger entries, newest first, one per line:',
        '  <id> <ISO time> DEPOSIT|WITHDRAW|BLOCK|RELEASE|DEBIT <rupees> order=<order_id|->',
      ].join('\n'),
    )
    .action(async (userId: string) => {
      await withWorkspace(io, async (workspace) => {
        const { account, ledger } = await workspace.funds.show(userId);
        writeAccount(io, userId, account);
        io.stdout.write(ledger.map(ledgerLine).join(''));
        if (account === undefined)
          io.stderr.write(
            `${userId} has no funds account: bids are not funds-checked (\`ordergate funds deposit\` opens one)\n`,
          );
      });
    });
  return funds;
}
