/** `ordergate oms`: the OMS worker (and the webhook dispatcher) alone, for a deployment that runs it apart from `serve` (OMS_EMBEDDED=false). */
import { Command } from 'commander';
import { withWorkspace, type CliIo } from './context.js';

/** Resolves on the first SIGTERM or SIGINT. */
function untilSignalled(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
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
        '\nWith METRICS_PORT it serves /metrics, /health/live and /health/ready there (METRICS_HOST, METRICS_TOKEN as for serve).',
    )
    .action(async () => {
      // From the start: a signal that comes while the store opens still ends the command cleanly (exit 0).
      const signalled = untilSignalled();
      // Loaded only here, so that the other commands start fast.
      const [{ createLogger }, { configuredWebhookDispatcher, createOmsWorker }, { OperatorMetrics }, { listenForMetrics, watchStore }, { warnOfMaintenance }] =
        await Promise.all([
          import('../logger.js'),
          import('../wiring.js'),
          import('../metrics/operator-metrics.js'),
          import('../http/metrics.js'),
          import('../store/health.js'),
        ]);
      await withWorkspace(io, async ({ config, store }) => {
        const logger = createLogger(config.logLevel);
        // This process's own metrics, on its own listener: the worker's and the dispatcher's figures are here.
        const metrics = new OperatorMetrics();
        watchStore(metrics, store);
        const metricsListener = await listenForMetrics(config, metrics, store, logger);
        const worker = createOmsWorker(store, { logger, pollMs: config.omsPollMs, leaseMs: config.omsLeaseMs, metrics: metrics.oms });
        const webhooks = configuredWebhookDispatcher(store, config, logger, metrics.webhooks);
        logger.info({ database: store.location }, 'ordergate oms running');
        await warnOfMaintenance(store, logger);
        worker.start();
        webhooks.start();
        const signal = await signalled;
        logger.info({ signal }, 'shutting down');
        await Promise.all([worker.stop(), webhooks.stop()]);
        await metricsListener?.close();
      });
    });
}
