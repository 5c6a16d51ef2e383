/** The registry of OFS issues. */
import type { Kysely, Selectable } from 'kysely';
import type { AllocationMethod, OfsExchange, OfsIssue, OfsIssueRegistration } from '../../domain/ofs/issue/issue.js';
import { prepareQuery, type PreparedQuery } from '../sql/prepared.js';
import type { Database, OfsIssuesTable } from '../schema/tables.js';
import { executorOf, type StoreTx } from '../sql/write-tx.js';

function toIssue(row: Selectable<OfsIssuesTable>): OfsIssue {
  return {
    exchange: row.exchange as OfsExchange,
    scripToken: Number(row.scrip_token),
    symbol: row.symbol,
    series: row.series,
    floorPricePaise: Number(row.floor_price_paise),
    tickSizePaise: Number(row.tick_size_paise),
    offerQuantity: Number(row.offer_quantity),
    retailReservePct: Number(row.retail_reserve_pct),
    retailCutoffPricePaise: row.retail_cutoff_price_paise === null ? null : Number(row.retail_cutoff_price_paise),
    allocation: row.allocation as AllocationMethod,
    settlementDelayMs: row.settlement_delay_ms === null ? null : Number(row.settlement_delay_ms),
    valueLimitPaise: row.value_limit_paise === null ? null : Number(row.value_limit_paise),
    nonRetailOpensAt: Number(row.non_retail_opens_at),
    nonRetailClosesAt: Number(row.non_retail_closes_at),
    retailOpensAt: Number(row.retail_opens_at),
    retailClosesAt: Number(row.retail_closes_at),
  };
}

function toRegistration(row: Selectable<OfsIssuesTable>): OfsIssueRegistration {
  return { issue: toIssue(row), allocatedAt: row.allocated_at === null ? null : Number(row.allocated_at) };
}

export class OfsIssueRepository {
  // Every order entry reads its issue: compiled once (see prepared.ts).
  private readonly findQuery: PreparedQuery<{ exchange: string; scripToken: number }, Selectable<OfsIssuesTable>>;

  constructor(private readonly db: Kysely<Database>) {
    this.findQuery = prepareQuery((p: { exchange: string; scripToken: number }) =>
      db
        .selectFrom('ofs_issues')
        .selectAll()
        .where('exchange', '=', p.exchange)
        .where('scrip_token', '=', p.scripToken),
    );
  }

  /** Pass `db` to read inside a transaction. */
  async find(exchange: string, scripToken: number, storeTx?: StoreTx): Promise<OfsIssue | undefined> {
    const db = executorOf(this.db, storeTx);
    const [row] = await this.findQuery.execute(db, { exchange, scripToken });
    return row && toIssue(row);
  }

  /** A look-up for one unit of work (a batch): each instrument is read once, in `storeTx` when given. */
  reader(storeTx?: StoreTx): (exchange: string, scripToken: number) => Promise<OfsIssue | undefined> {
    const read = new Map<string, Promise<OfsIssue | undefined>>();
    return (exchange, scripToken) => {
      const key = `${exchange}\u0000${scripToken}`;
      let issue = read.get(key);
      if (issue === undefined) read.set(key, (issue = this.find(exchange, scripToken, storeTx)));
      return issue;
    };
  }

  async list(): Promise<OfsIssue[]> {
    const rows = await this.db
      .selectFrom('ofs_issues')
      .selectAll()
      .orderBy('exchange')
      .orderBy('scrip_token')
      .execute();
    return rows.map(toIssue);
  }

  /** Every registered issue with its allocation instant, for the console (src/services/ofs-book.ts orders them). */
  async listRegistrations(): Promise<OfsIssueRegistration[]> {
    const rows = await this.db.selectFrom('ofs_issues').selectAll().execute();
    return rows.map(toRegistration);
  }

  async findRegistration(exchange: string, scripToken: number): Promise<OfsIssueRegistration | undefined> {
    const row = await this.db
      .selectFrom('ofs_issues')
      .selectAll()
      .where('exchange', '=', exchange)
      .where('scrip_token', '=', scripToken)
      .executeTakeFirst();
    return row && toRegistration(row);
  }

  /**
   * Registers the issues, updating any with the same exchange and scrip_token, all in one transaction.
   * An update whose windows close after `now` clears `allocated_at`.
   */
  async upsert(issues: readonly OfsIssue[], now: number): Promise<void> {
    await this.db.transaction().execute((trx) => upsertIssues(trx, issues, now));
  }
}

/** Registers the issues in `trx`, updating any with the same exchange and scrip_token (see upsert). */
export async function upsertIssues(trx: Kysely<Database>, issues: readonly OfsIssue[], now: number): Promise<void> {
  for (const issue of issues) {
    const values = {
      symbol: issue.symbol,
      series: issue.series,
      floor_price_paise: issue.floorPricePaise,
      tick_size_paise: issue.tickSizePaise,
      offer_quantity: issue.offerQuantity,
      retail_reserve_pct: issue.retailReservePct,
      retail_cutoff_price_paise: issue.retailCutoffPricePaise,
      allocation: issue.allocation,
      non_retail_opens_at: issue.nonRetailOpensAt,
      non_retail_closes_at: issue.nonRetailClosesAt,
      retail_opens_at: issue.retailOpensAt,
      retail_closes_at: issue.retailClosesAt,
      settlement_delay_ms: issue.settlementDelayMs,
      value_limit_paise: issue.valueLimitPaise ?? null,
      updated_at: now,
    };
    await trx
      .insertInto('ofs_issues')
      .values({ exchange: issue.exchange, scrip_token: issue.scripToken, ...values })
      // Windows moved to close in the future re-open the issue: it is allocated again at the new close
      // (bids already allotted or not allotted are finished and take no part).
      .onConflict((oc) =>
        oc
          .columns(['exchange', 'scrip_token'])
          .doUpdateSet(
            Math.max(issue.nonRetailClosesAt, issue.retailClosesAt) > now ? { ...values, allocated_at: null } : values,
          ),
      )
      .execute();
  }
}
