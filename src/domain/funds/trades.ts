/**
 * Trades, positions and holdings (odin-compat.md; docs/design/portfolio.md). Every allotment is a trade;
 * allotted shares are a position until the trade settles, then a holding. An offer's allotments settle on
 * trading days at the pay-out time (./trading-calendar.ts); an issue of the one-listing model's the day
 * after the allotment at 09:00 India time; either after the delay its import sets (a drill). Pure
 * functions: the OMS records trades (`tradeOfAllotment` in ./order.ts) through OrderRepository.apply, the
 * portfolio service reads them.
 */
import type { Offer } from '../ofs/offer/offer.js';
import { IST_OFFSET_MS } from '../ofs/rules.js';
import { settlementInstant, type TradingCalendar } from '../ofs/trading-calendar.js';

export interface Trade {
  tradeId: string;
  orderId: string;
  userId: string;
  exchange: string;
  scripToken: number;
  symbol: string;
  series: string;
  transactionType: string;
  productType: string;
  quantity: number;
  pricePaise: number;
  tradedAt: number;
  /** When the shares become a holding. */
  settlesAt: number;
  exchangeOrderId: string | null;
  orderIdentifier: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** T+1 settlement completes before the next day's market opens: 09:00 India time. */
const SETTLEMENT_HOUR_IST = 9;

/**
 * When a trade in an issue of the one-listing model made at `tradedAt` settles: after `delayMs` when the
 * issue sets one, else the next day at 09:00 IST (that model's settlement, kept as it was).
 */
export function settlementTime(tradedAt: number, delayMs: number | null): number {
  if (delayMs !== null) return tradedAt + delayMs;
  const istMidnight = Math.floor((tradedAt + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
  return istMidnight + DAY_MS + SETTLEMENT_HOUR_IST * 60 * 60 * 1000;
}

/**
 * When an allotment in an offer made at `allottedAt` settles: after the offer's delay for a drill offer;
 * else at the pay-out time of the first trading day after the day the allotment belongs to (T-day
 * allotments on T+1, T+1 allotments on T+2; ofs-framework.md). `day` null (an event from before the
 * exchange said): T when it came before T+1 opened.
 */
export function offerSettlementTime(
  offer: Pick<Offer, 'settlementDelayMs' | 'tDay' | 't1Day'>,
  day: 'T' | 'T+1' | null,
  allottedAt: number,
  calendar: TradingCalendar,
): number {
  if (offer.settlementDelayMs !== null) return allottedAt + offer.settlementDelayMs;
  const t1 = day === null ? allottedAt >= offer.t1Day.opensAt : day === 'T+1';
  return settlementInstant(calendar, t1 ? offer.t1Day.closesAt : offer.tDay.closesAt);
}

/** One allotment per order: the trade takes the order's id, so a repeated event can never make a second one. */
export function tradeIdOf(orderId: string): string {
  return `T-${orderId}`;
}

/** Shares bought and what they cost, for one instrument: an open position or a holding. */
export interface PortfolioLine {
  exchange: string;
  scripToken: number;
  symbol: string;
  series: string;
  productType: string;
  quantity: number;
  /** quantity x price summed over the trades, in paise (BigInt: it can pass 2^53). */
  valuePaise: bigint;
  /** The trades' weighted average price, in paise, rounded half up to a whole paisa. */
  averagePricePaise: bigint;
  /** The latest trade's time. */
  lastTradedAt: number;
  /** When the last of its shares settle (positions), or settled (holdings). */
  settlesAt: number;
}

/**
 * The trades summed per instrument (exchange and token: a share bought on NSE and one bought on BSE are
 * listed apart, as ODIN lists them), in the order of their first trade.
 */
export function portfolioOf(trades: readonly Trade[]): PortfolioLine[] {
  const lines = new Map<string, Omit<PortfolioLine, 'averagePricePaise'>>();
  for (const trade of [...trades].sort((a, b) => a.tradedAt - b.tradedAt || (a.tradeId < b.tradeId ? -1 : 1))) {
    const key = `${trade.exchange}\u0000${trade.scripToken}\u0000${trade.productType}`;
    const line = lines.get(key);
    const value = BigInt(trade.quantity) * BigInt(trade.pricePaise);
    if (line === undefined) {
      lines.set(key, {
        exchange: trade.exchange,
        scripToken: trade.scripToken,
        symbol: trade.symbol,
        series: trade.series,
        productType: trade.productType,
        quantity: trade.quantity,
        valuePaise: value,
        lastTradedAt: trade.tradedAt,
        settlesAt: trade.settlesAt,
      });
      continue;
    }
    line.quantity += trade.quantity;
    line.valuePaise += value;
    line.lastTradedAt = Math.max(line.lastTradedAt, trade.tradedAt);
    line.settlesAt = Math.max(line.settlesAt, trade.settlesAt);
  }
  return [...lines.values()].map((line) => ({
    ...line,
    averagePricePaise: roundedDivide(line.valuePaise, BigInt(line.quantity)),
  }));
}

function roundedDivide(value: bigint, by: bigint): bigint {
  return by === 0n ? 0n : (value * 2n + by) / (2n * by);
}

/** The positions a `type` of the positions call lists (odin-compat.md): all, today's, or expiring today. */
export const POSITION_TYPES = ['all', 'daily', 'expiry'] as const;
export type PositionType = (typeof POSITION_TYPES)[number];

/**
 * Which unsettled trades a positions `type` covers at `now`: `all` every one, `daily` those traded today
 * (India time), `expiry` those in instruments expiring today: none, since OFS shares have no expiry.
 */
export function tradesOfPositionType(type: PositionType, trades: readonly Trade[], now: number): Trade[] {
  if (type === 'all') return [...trades];
  if (type === 'expiry') return [];
  const today = istDay(now);
  return trades.filter((trade) => istDay(trade.tradedAt) === today);
}

const istDay = (epochMs: number) => Math.floor((epochMs + IST_OFFSET_MS) / DAY_MS);
