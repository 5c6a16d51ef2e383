/**
 * The simulator's steps count their failures where the process's operator metrics count the OMS's
 * (`instrumentMetrics`): with `npm start` the allocations run in the simulator, and an instrument whose
 * allocation keeps failing must still show in `ordergate_oms_instrument_failures_total`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OFFER_T1_CLOSE, OFFER_T_CLOSE, SimBench } from './support.js';

let bench: SimBench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

describe('the simulator’s instrument failures', () => {
  it('are counted in the metrics it is given', async () => {
    const failures: { step: string; setAside: boolean }[] = [];
    bench = await SimBench.open({
      instrumentMetrics: { instrumentFailed: (step, setAside) => failures.push({ step, setAside }) },
    });
    // The offer allotted on T, its T-day cut-off stored broken: the T+1 allocation cannot run.
    await bench.store.db
      .updateTable('ofs_offers')
      .set({ t_allocated_at: OFFER_T_CLOSE + 60_000, t_cutoff_price_paise: -5 })
      .where('offer_id', '=', 'ACME-X')
      .execute();
    bench.clock.now = OFFER_T1_CLOSE + 60_000;
    await bench.sim.step();
    expect(failures).toEqual([{ step: 'allocation', setAside: false }]);
  });
});
