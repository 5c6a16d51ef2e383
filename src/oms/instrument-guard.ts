/**
 * One instrument's failure is its own (docs/design/oms.md): the work the OMS does for one instrument (an
 * offer or an issue: the exchange's allocation, its indicative price, applying its allotments) runs under
 * this guard, each step apart. A failure is logged with its reason and recorded, the step is tried again
 * after a pause that doubles (1 s, 2 s, 4 s, 8 s), and after MAX_TRIES failures in a row it is set aside:
 * the OMS leaves it alone until the operator, having fixed the cause, takes it back (`ordergate oms
 * retry`). The other instruments, and the instrument's other steps, go on all the while. A database that
 * cannot be used is nobody's fault: that error fails the whole pass, as before, and counts against no
 * instrument.
 */
import type { Logger } from 'pino';
import type { InstrumentFault, InstrumentFaultRepository } from '../store/ofs/instrument-faults.js';
import { DatabaseUnavailableError } from '../domain/errors.js';

/** Failures in a row after which an instrument's step is set aside. */
export const MAX_TRIES = 5;
/** The pause after a step's first failure; it doubles with each failure after. */
export const FIRST_RETRY_MS = 1_000;

/** The work of an instrument the guard keeps apart. */
export type InstrumentStep = 'allocation' | 'indicative' | 'events';

/** What the guard reports to the operator's metrics. */
export interface InstrumentMetrics {
  instrumentFailed(step: InstrumentStep, setAside: boolean): void;
}

const keyOf = (instrument: string, step: InstrumentStep) => `${instrument}\u0000${step}`;

export class InstrumentGuard {
  /** The failures on record, read once a pass (newPass), by instrument and step. */
  private faults: Map<string, InstrumentFault> | undefined;

  constructor(
    private readonly repository: Pick<InstrumentFaultRepository, 'all' | 'recordFailure' | 'clear'>,
    private readonly now: () => number,
    private readonly logger: Logger,
    private readonly metrics?: InstrumentMetrics,
  ) {}

  /** Reads the failures on record again at the next run (a pass begins; the operator may have taken one back). */
  newPass(): void {
    this.faults = undefined;
  }

  /** Whether the instrument's step may run now: not set aside, and not pausing after a failure. */
  async mayRun(instrument: string, step: InstrumentStep): Promise<boolean> {
    const fault = (await this.loaded()).get(keyOf(instrument, step));
    return fault === undefined || (fault.setAsideAt === null && fault.nextTryAt <= this.now());
  }

  /**
   * Runs the instrument's step unless it may not run now; answers its result, or undefined when it was
   * skipped or failed (the failure is recorded). Rethrows a DatabaseUnavailableError.
   */
  async run<T>(instrument: string, step: InstrumentStep, work: () => Promise<T>): Promise<T | undefined> {
    if (!(await this.mayRun(instrument, step))) return undefined;
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (error instanceof DatabaseUnavailableError) throw error;
      await this.failed(instrument, step, error);
      return undefined;
    }
    await this.succeeded(instrument, step);
    return result;
  }

  /** The instrument's step worked: its failures on record are forgotten. */
  async succeeded(instrument: string, step: InstrumentStep): Promise<void> {
    const faults = await this.loaded();
    const fault = faults.get(keyOf(instrument, step));
    if (fault === undefined) return;
    await this.repository.clear(instrument, step);
    faults.delete(keyOf(instrument, step));
    this.logger.info(
      { instrument, step, failures: fault.failures },
      'OMS work on an instrument succeeded again after failures',
    );
  }

  private async loaded(): Promise<Map<string, InstrumentFault>> {
    this.faults ??= new Map(
      (await this.repository.all()).map((fault) => [keyOf(fault.instrument, fault.step as InstrumentStep), fault]),
    );
    return this.faults;
  }

  private async failed(instrument: string, step: InstrumentStep, error: unknown): Promise<void> {
    const now = this.now();
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const fault = await this.repository.recordFailure(instrument, step, reason, now, {
      maxTries: MAX_TRIES,
      firstRetryMs: FIRST_RETRY_MS,
    });
    (await this.loaded()).set(keyOf(instrument, step), fault);
    const setAsideNow = fault.setAsideAt === now;
    this.metrics?.instrumentFailed(step, setAsideNow);
    if (setAsideNow) {
      this.logger.error(
        { err: error, instrument, step, failures: fault.failures },
        `OMS set ${instrument} (${step}) aside after ${fault.failures} failures in a row; the other instruments go on. Fix the cause, then: ordergate oms retry ${instrument}`,
      );
    } else {
      this.logger.error(
        { err: error, instrument, step, failures: fault.failures, nextTryAt: new Date(fault.nextTryAt).toISOString() },
        'OMS work on an instrument failed; it is tried again later',
      );
    }
  }
}
