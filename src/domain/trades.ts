/**
 * Trades, positions and holdings (odin-compat.md; docs/design/portfolio.md). Every allotment is a trade;
 * allotted shares are a position until the trade settles, then a holding. Settlement is T+1 by default (the
 * day after the allotment, at 09:00 India time: shares are credited before the market opens; no holiday
 * calendar), or the delay an issue's import sets. Pure functions: the OMS records trades (`tradeOfAllotment`
 * in ./order.ts) through OrderRepository.apply, the portfolio service reads them.
 */
import { IST_OFFSET_MS } from './ofs-rules.js';

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

/** When a trade made at `tradedAt` settles: after `delayMs` when the issue sets one, else T+1 at 09:00 IST. */
export function settlementTime(tradedAt: number, delayMs: number | null): number {
  if (delayMs !== null) return tradedAt + delayMs;
  const istMidnight = Math.floor((tradedAt + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
  return istMidnight + DAY_MS + SETTLEMENT_HOUR_IST * 60 * 60 * 1000;
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
  return [...lines.values()].map((line) => ({ ...line, averagePricePaise: roundedDivide(line.valuePaise, BigInt(line.quantity)) }));
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
