/**
 * What the exchange last said of its listings (migration 0030; issue 50, item 3): the last answer per
 * exchange segment and symbol, as the exchange wrote it (JSON), and when it was read; per exchange, when it
 * was last read and the last read that failed. Written by the session holder's refresher
 * (src/oms/exchange-terms.ts), read by `ordergate ofs exchange-terms`. The store does not read the entry:
 * its shape is the link's.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

/** One listing's last answer. */
export interface StoredListingTerms {
  exchange: string;
  symbol: string;
  /** The exchange's entry, parsed back from its JSON. */
  terms: unknown;
  readAt: number;
}

/** An exchange's reads: the last that succeeded and the last that failed (null: none yet). */
export interface ExchangeTermsReads {
  exchange: string;
  readAt: number | null;
  error: string | null;
  errorAt: number | null;
}

export class ExchangeTermsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * One read's answer: each listing's entry replaces its last, and the exchange's read time is `at`; a
   * listing not in the answer keeps its last row. One transaction.
   */
  async recordRead(
    exchange: string,
    listings: readonly { symbol: string; terms: unknown }[],
    at: number,
  ): Promise<void> {
    // The last entry for a symbol the answer repeats wins.
    const bySymbol = new Map(listings.map((l) => [l.symbol, JSON.stringify(l.terms)]));
    await this.db.transaction().execute(async (trx) => {
      for (const [symbol, terms] of bySymbol) {
        await trx
          .insertInto('exchange_listing_terms')
          .values({ exchange, symbol, terms, read_at: at })
          .onConflict((oc) => oc.columns(['exchange', 'symbol']).doUpdateSet({ terms, read_at: at }))
          .execute();
      }
      await trx
        .insertInto('exchange_terms_reads')
        .values({ exchange, read_at: at, error: null, error_at: null })
        .onConflict((oc) => oc.column('exchange').doUpdateSet({ read_at: at }))
        .execute();
    });
  }

  /** A read that failed: kept as the exchange's last error (the listings' last answers stay). */
  async recordFailure(exchange: string, error: string, at: number): Promise<void> {
    await this.db
      .insertInto('exchange_terms_reads')
      .values({ exchange, read_at: null, error, error_at: at })
      .onConflict((oc) => oc.column('exchange').doUpdateSet({ error, error_at: at }))
      .execute();
  }

  /** The last answer for a listing; undefined: never read. */
  async find(exchange: string, symbol: string): Promise<StoredListingTerms | undefined> {
    const row = await this.db
      .selectFrom('exchange_listing_terms')
      .selectAll()
      .where('exchange', '=', exchange)
      .where('symbol', '=', symbol)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return { exchange: row.exchange, symbol: row.symbol, terms: JSON.parse(row.terms), readAt: Number(row.read_at) };
  }

  /** The exchange's reads; undefined: it was never read, nor tried. */
  async reads(exchange: string): Promise<ExchangeTermsReads | undefined> {
    const row = await this.db
      .selectFrom('exchange_terms_reads')
      .selectAll()
      .where('exchange', '=', exchange)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const at = (value: number | string | null) => (value === null ? null : Number(value));
    return { exchange: row.exchange, readAt: at(row.read_at), error: row.error, errorAt: at(row.error_at) };
  }
}
