/**
 * The OMS's instrument guard (src/oms/instrument-guard.ts) over its failure records on the run's database:
 * each step of an instrument apart, the pause that doubles, the set-aside at the fifth failure in a row,
 * a database outage counted against nobody, and two workers (two nodes) counting one instrument's
 * failures together without losing one or undoing a set-aside.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_RETRY_MS, InstrumentGuard, MAX_TRIES } from '../../src/oms/instrument-guard.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { InstrumentFaultRepository } from '../../src/store/ofs/instrument-faults.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { recordingLogger } from './fixture.js';

describe('InstrumentGuard', () => {
  let database: TestDatabase;
  let store: Store;
  let faults: InstrumentFaultRepository;
  const clock = { now: 1_000_000 };
  const log = recordingLogger();
  const fail = () => Promise.reject(new RangeError('broken terms'));
  const guard = () => new InstrumentGuard(faults, () => clock.now, log.logger);

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    store = openStore(database.databaseUrl);
    faults = new InstrumentFaultRepository(store.db, store.dialect);
  });
  afterAll(async () => {
    await store?.close();
    await database?.dispose();
  });

  it('keeps each step apart: a working step never clears the failures of another of the same instrument', async () => {
    const one = guard();
    expect(await one.run('offer:A', 'allocation', fail)).toBeUndefined();
    for (let pass = 0; pass < 20; pass++) {
      one.newPass();
      clock.now += 60_000;
      expect(await one.run('offer:A', 'indicative', async () => 'published')).toBe('published');
      await one.run('offer:A', 'allocation', fail);
    }
    const [fault] = (await faults.all()).filter((f) => f.instrument === 'offer:A');
    // Counted on, and set aside at the fifth, though the indicative price published at every pass.
    expect(fault).toMatchObject({ step: 'allocation', failures: MAX_TRIES, setAsideAt: expect.any(Number) });
    expect(await faults.clear('offer:A')).toBe(true);
  });

  it('pauses 1, 2, 4 and 8 s after failures, sets the step aside at the fifth, and runs it no more until it is taken back', async () => {
    const one = guard();
    let tries = 0;
    const counted = () => {
      tries += 1;
      return fail();
    };
    await one.run('issue:NSE_EQ:1', 'allocation', counted);
    for (const pauseMs of [1_000, 2_000, 4_000, 8_000]) {
      clock.now += pauseMs - 1;
      one.newPass();
      await one.run('issue:NSE_EQ:1', 'allocation', counted);
      // Not yet due: not tried.
      expect(tries).toBeLessThan(MAX_TRIES);
      clock.now += 1;
      one.newPass();
      await one.run('issue:NSE_EQ:1', 'allocation', counted);
    }
    expect(tries).toBe(MAX_TRIES);
    const [fault] = await faults.all();
    expect(fault).toMatchObject({
      instrument: 'issue:NSE_EQ:1',
      failures: MAX_TRIES,
      setAsideAt: clock.now,
      lastError: 'RangeError: broken terms',
    });
    clock.now += 24 * 60 * 60 * 1000;
    one.newPass();
    await one.run('issue:NSE_EQ:1', 'allocation', counted);
    expect(tries).toBe(MAX_TRIES);
    // The operator takes it back: it runs at the next pass, and its record is gone once it works.
    expect(await faults.clear('issue:NSE_EQ:1')).toBe(true);
    one.newPass();
    expect(await one.run('issue:NSE_EQ:1', 'allocation', async () => 'allotted')).toBe('allotted');
    expect(await faults.all()).toEqual([]);
    expect(FIRST_RETRY_MS).toBe(1_000);
  });

  it('counts a database outage against no instrument: it fails the pass', async () => {
    const one = guard();
    await expect(
      one.run('offer:B', 'allocation', () =>
        Promise.reject(new DatabaseUnavailableError(new Error('connection refused'))),
      ),
    ).rejects.toThrow(DatabaseUnavailableError);
    expect(await faults.all()).toEqual([]);
  });

  it('counts the failures of two workers on one instrument together, and keeps a set-aside set aside', async () => {
    const [nodeA, nodeB] = [guard(), guard()];
    for (let i = 0; i < 3; i++) {
      // Both read the records once, then both fail: neither's count may undo the other's.
      nodeA.newPass();
      nodeB.newPass();
      clock.now += 60_000;
      await nodeA.mayRun('offer:C', 'events');
      await nodeB.mayRun('offer:C', 'events');
      await Promise.all([nodeA.run('offer:C', 'events', fail), nodeB.run('offer:C', 'events', fail)]);
    }
    const [fault] = await faults.all();
    expect(fault).toMatchObject({ instrument: 'offer:C', step: 'events', failures: 6 });
    expect(fault!.setAsideAt).not.toBeNull();
    const setAsideAt = fault!.setAsideAt;
    // A later failure recorded by a worker whose records were old leaves the set-aside as it was.
    clock.now += 60_000;
    await faults.recordFailure('offer:C', 'events', 'again', clock.now, {
      maxTries: MAX_TRIES,
      firstRetryMs: FIRST_RETRY_MS,
    });
    expect((await faults.all())[0]).toMatchObject({ failures: 7, setAsideAt });
  });
});
