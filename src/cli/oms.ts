/**
 * `ordergate oms`: the OMS worker (and the webhook dispatcher) alone, for a deployment that runs it apart from
 * `serve` (OMS_EMBEDDED=false); `oms stuck` and `oms retry`: the instruments whose work the OMS set aside.
 */
import { Command, Option } from 'commander';
import { InstrumentFaultRepository } from '../store/ofs/instrument-faults.js';
import { CliError, isoInstant, untilSignalled, withWorkspace, type CliIo } from './context.js';

/** `ordergate oms stuck`: one line per instrument with failures on record, set aside first. */
function stuckCommand(io: CliIo): Command {
  return new Command('stuck')
    .description(
      'list the instruments (offers, issues) whose work keeps failing in the OMS, and those it set aside for the operator, with the reason',
    )
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout one line per instrument and step that failed, set aside first:',
        '  <set-aside|retrying> <instrument> step=<allocation|indicative|events> failures=<n> since=<first failure> last=<last failure>',
        '    next_try=<instant|->',
        '  then the last error on the next line, indented by two spaces.',
        'Nothing on stdout (and a hint on stderr) when no instrument has failed. `ordergate oms retry <instrument>` takes one back.',
      ].join('\n'),
    )
    .action(async () => {
      await withWorkspace(io, async ({ store }) => {
        const faults = await new InstrumentFaultRepository(store.db, store.dialect).all();
        if (faults.length === 0) io.stderr.write('no instrument is failing or set aside\n');
        for (const fault of faults) {
          io.stdout.write(
            `${fault.setAsideAt === null ? 'retrying' : 'set-aside'} ${fault.instrument} step=${fault.step} failures=${fault.failures} ` +
              `since=${isoInstant(fault.firstFailedAt)} last=${isoInstant(fault.lastFailedAt)} next_try=${fault.setAsideAt === null ? isoInstant(fault.nextTryAt) : '-'}\n` +
              `  ${fault.lastError.replace(/\s*\n\s*/g, ' ')}\n`,
          );
        }
      });
    });
}

/** `ordergate oms retry <instrument>`: the OMS takes the instrument's work back at its next pass. */
function retryCommand(io: CliIo): Command {
  return new Command('retry')
    .description(
      'take an instrument the OMS set aside (or is retrying) back: the failures of its steps (or of one, --step) are forgotten and its work runs at the next pass; fix the cause first',
    )
    .argument('<instrument>', 'as `ordergate oms stuck` names it: offer:<offer_id> or issue:<exchange>:<scrip_token>')
    .addOption(new Option('--step <step>', 'only this step').choices(['allocation', 'indicative', 'events']))
    .addHelpText('after', '\nPrints on stdout:\n  retrying: <instrument>: at the next pass of the OMS')
    .action(async (instrument: string, options: { step?: string }) => {
      await withWorkspace(io, async ({ store }) => {
        if (!(await new InstrumentFaultRepository(store.db, store.dialect).clear(instrument, options.step))) {
          throw new CliError(`${instrument}: no failure is on record for it (see ordergate oms stuck)`);
        }
        io.stdout.write(`retrying: ${instrument}: at the next pass of the OMS\n`);
      });
    });
}

export function omsCommand(io: CliIo): Command {
  return new Command('oms')
    .description(
      'run the OMS worker and the webhook dispatcher alone over DATABASE_URL until SIGTERM or SIGINT (beside servers started with OMS_EMBEDDED=false)',
    )
    .addHelpText(
      'after',
      '\nLogs are JSON lines on stderr. Several workers may run on one database: each outbox entry is taken by one of them.' +
        '\nWith METRICS_PORT it serves /metrics, /health/live, /health/ready and /health/oms there (METRICS_HOST, METRICS_TOKEN as for serve).',
    )
    .action(async () => {
      // From the start: a signal that comes while the store opens still ends the command cleanly (exit 0).
      const signalled = untilSignalled();
      // Loaded only here, so that the other commands start fast.
      const [
        { createLogger },
        {
          configuredWebhookDispatcher,
          createOmsWorker,
          createReconciler,
          listenForMetrics,
          openExchangeLinks,
          watchStore,
        },
        { OperatorMetrics },
        { warnOfMaintenance },
      ] = await Promise.all([
        import('../logger.js'),
        import('../wiring.js'),
        import('../metrics/operator-metrics.js'),
        import('../store/sql/health.js'),
      ]);
      await withWorkspace(io, async ({ config, store }) => {
        const logger = createLogger(config.logLevel);
        // This process's own metrics, on its own listener: the worker's and the dispatcher's figures are here.
        const metrics = new OperatorMetrics();
        // The exchange links (docs/exchanges.md); `sim` starts the exchange simulator here, on loopback.
        const links = await openExchangeLinks(store, config.exchange, logger, Date.now, metrics.oms);
        const linkHealth = { current: () => links.health() };
        watchStore(metrics, store, linkHealth);
        // A listener that cannot start stops the command: the simulator started above must not outlive it.
        const metricsListener = await listenForMetrics(config, metrics, store, logger, linkHealth).catch(
          async (error: unknown) => {
            await links.close().catch(() => undefined);
            throw error;
          },
        );
        const worker = createOmsWorker(store, {
          logger,
          pollMs: config.omsPollMs,
          leaseMs: config.omsLeaseMs,
          metrics: metrics.oms,
          ...(links.exchange !== undefined && { exchange: links.exchange }),
        });
        // Reconciliation at every close and at the operator's request, where this node holds the exchange session.
        const reconciler = createReconciler(store, {
          logger,
          holder: worker.workerId,
          metrics: metrics.reconciliations,
          ...(links.exchange !== undefined && { exchange: links.exchange }),
        });
        const webhooks = configuredWebhookDispatcher(store, config, logger, metrics.webhooks);
        logger.info({ database: store.location }, 'ordergate oms running');
        await warnOfMaintenance(store, logger);
        worker.start();
        reconciler.start();
        webhooks.start();
        const signal = await signalled;
        logger.info({ signal }, 'shutting down');
        await Promise.all([Promise.all([reconciler.stop(), worker.stop()]).then(() => links.close()), webhooks.stop()]);
        await metricsListener?.close();
      });
    })
    .addCommand(stuckCommand(io))
    .addCommand(retryCommand(io));
}
