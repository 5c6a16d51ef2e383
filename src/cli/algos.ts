/**
 * `ordergate algos register|list|history|disable|enable`: the algos an exchange approved, for the users who
 * run them, and the kill switch (SEBI's rules for API and algo orders; docs/design/sebi-algo.md). Every
 * registration, stop and start is recorded with the operator's login on this machine (or `--actor`).
 */
import { userInfo } from 'node:os';
import { Command, Option } from 'commander';
import type { AlgoRegistration } from '../domain/orders/algo-rules.js';
import type { AlgoService } from '../services/algos.js';
import { isoInstant, withWorkspace, writeFields, type CliIo } from './context.js';

/** The operator named in the record: `--actor`, else this machine's login. */
function actorOf(options: { actor?: string }, io: CliIo): string {
  return options.actor ?? io.env.USER ?? io.env.LOGNAME ?? userInfo().username;
}

function actorOption(): Option {
  return new Option('--actor <name>', "who does it, for the record (default: this machine's login)");
}

function fieldsOf(algo: AlgoRegistration): [string, string][] {
  return [
    ['algo_id', algo.algoId],
    ['exchange', algo.exchange],
    ['approval', algo.approvalRef],
    ['name', algo.name ?? '-'],
    ['users', algo.userIds.join(',')],
    [
      'status',
      algo.disabledAt === null ? 'enabled' : `disabled since ${isoInstant(algo.disabledAt)} (${algo.disabledReason})`,
    ],
  ];
}

/**
 * Runs `work` with the algo service over the workspace's store, with the server's settings (ALGO_GENERIC_ID).
 * The service's modules (order entry's) are loaded here, not when any command starts (as `ordergate oms`).
 */
async function withAlgos<T>(io: CliIo, work: (algos: AlgoService) => Promise<T>): Promise<T> {
  const { createAlgoService } = await import('../wiring.js');
  return withWorkspace(io, ({ store, config }) => work(createAlgoService(store, config.algo)));
}

export function algosCommand(io: CliIo): Command {
  const algos = new Command('algos').description(
    "the algos an exchange approved, who runs them, and the kill switch (SEBI's algo rules)",
  );
  algos
    .command('register')
    .description(
      'register an algo the exchange approved, for the users who may send orders with its ID; again, to add users',
    )
    .argument('<algo_id>', "the exchange's algo ID (1 to 32 letters, digits, _ - .)")
    .requiredOption('--exchange <segment>', 'the exchange segment that issued the ID: NSE_EQ or BSE_EQ')
    .requiredOption('--approval <reference>', "the exchange's approval reference, for the audit")
    .addOption(
      new Option('--user <user_id>', 'a user who runs the algo (repeat for more)')
        .makeOptionMandatory()
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .option('--name <name>', "the algo's name, for people")
    .addOption(actorOption())
    .addHelpText(
      'after',
      '\nPrints on stdout:\n  algo_id, exchange, approval, name, users, status: <the algo>\n  added: <users added|->',
    )
    .action(
      async (
        algoId: string,
        options: { exchange: string; approval: string; user: string[]; name?: string; actor?: string },
      ) => {
        await withAlgos(io, async (service) => {
          const { registration, created, added } = await service.register(
            {
              algoId,
              exchange: options.exchange,
              approvalRef: options.approval,
              name: options.name ?? null,
              userIds: options.user,
            },
            actorOf(options, io),
          );
          writeFields(io, [...fieldsOf(registration), ['added', added.length === 0 ? '-' : added.join(',')]]);
          io.stderr.write(
            created
              ? `registered algo ${algoId}\n`
              : `algo ${algoId} was registered already; ${added.length} user(s) added\n`,
          );
        });
      },
    );
  algos
    .command('list')
    .description('list the registered algos')
    .addHelpText(
      'after',
      '\nPrints on stdout one line per algo:\n  <algo_id> exchange=<segment> users=<user,...> status=<enabled|disabled> approval=<reference>',
    )
    .action(async () => {
      await withAlgos(io, async (service) => {
        for (const algo of await service.list()) {
          const status = algo.disabledAt === null ? 'enabled' : 'disabled';
          io.stdout.write(
            `${algo.algoId} exchange=${algo.exchange} users=${algo.userIds.join(',')} status=${status} approval=${algo.approvalRef}\n`,
          );
        }
      });
    });
  algos
    .command('history')
    .description('an algo and every registration, stop and start of it, with who did it and what the stops cancelled')
    .argument('<algo_id>')
    .addHelpText(
      'after',
      '\nPrints on stdout the algo (as `register` does), then one line per change, oldest first:\n  <ISO time> <action> by <actor>: <detail> [reason: <reason>]',
    )
    .action(async (algoId: string) => {
      await withAlgos(io, async (service) => {
        const { registration, changes } = await service.history(algoId);
        writeFields(io, fieldsOf(registration));
        for (const change of changes) {
          io.stdout.write(
            `${isoInstant(change.at)} ${change.action} by ${change.actor}: ${change.detail}${change.reason === null ? '' : ` [reason: ${change.reason}]`}\n`,
          );
        }
      });
    });
  algos
    .command('disable')
    .description(
      'the kill switch: refuse new orders and modifications with the algo ID at once, and cancel its live orders',
    )
    .argument('<algo_id>')
    .requiredOption('--reason <text>', "why, for the record (e.g. the exchange's instruction)")
    .addOption(actorOption())
    .addHelpText(
      'after',
      [
        '',
        "Every live order carrying the ID is cancelled on its owner's behalf where its owner could cancel it",
        '(the bidding window open, not a 0 %-margin bid); the others are listed. Again on a stopped algo: its',
        'live orders are swept again.',
        '',
        'Prints on stdout:',
        '  algo_id: <algo_id>',
        '  status: disabled',
        '  cancelled: <order ids|->',
        '  not_cancelled: <order id (code: why), ...|->',
      ].join('\n'),
    )
    .action(async (algoId: string, options: { reason: string; actor?: string }) => {
      await withAlgos(io, async (service) => {
        const result = await service.disable(algoId, options.reason, actorOf(options, io));
        writeFields(io, [
          ['algo_id', algoId],
          ['status', 'disabled'],
          ['cancelled', result.cancelled.length === 0 ? '-' : result.cancelled.join(',')],
          [
            'not_cancelled',
            result.notCancelled.length === 0
              ? '-'
              : result.notCancelled.map((o) => `${o.orderId} (${o.code}: ${o.message})`).join(', '),
          ],
        ]);
        io.stderr.write(
          `${result.stoppedNow ? 'stopped' : 'already stopped:'} algo ${algoId}; ${result.cancelled.length} live order(s) cancelled, ${result.notCancelled.length} could not be\n`,
        );
      });
    });
  algos
    .command('enable')
    .description('start a stopped algo again: orders with its ID are taken from now on')
    .argument('<algo_id>')
    .requiredOption('--reason <text>', 'why, for the record')
    .addOption(actorOption())
    .addHelpText('after', '\nPrints on stdout:\n  algo_id, exchange, approval, name, users, status: <the algo>')
    .action(async (algoId: string, options: { reason: string; actor?: string }) => {
      await withAlgos(io, async (service) => {
        writeFields(io, fieldsOf(await service.enable(algoId, options.reason, actorOf(options, io))));
      });
    });
  return algos;
}
