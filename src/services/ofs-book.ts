/**
 * What the console reads of the OFS issues (docs/design/console-api.md): every registered issue with where
 * its windows stand, for any logged-in user; an issue's book of demand, clearing prices and allotments, and
 * an offer's book per category and listing, for operators only.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { allottedBook, byNewestWindows, ofsBook } from '../domain/ofs/issue/book.js';
import type { OfsBookData, OfsIssuesData } from '../schemas/ofs.js';
import type { OfsOfferBookData } from '../schemas/ofs-offer.js';
import { offerBook, type OfferBookFigures } from '../domain/ofs/offer/book.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import { toOfferEntry } from '../schemas/mappers/ofs-offer.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import type { OfsBookRepository } from '../store/ofs/book.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import { toAllotted, toDemand, toOfsIssueEntry } from '../schemas/mappers/ofs.js';
import type { UserRepository } from '../store/access/users.js';
import type { Caller } from './auth.js';

const rupees = (paise: number) => paise / 100;
const instant = (ms: number) => new Date(ms).toISOString();

export class OfsBookService {
  constructor(
    private readonly issues: OfsIssueRepository,
    private readonly book: OfsBookRepository,
    private readonly users: UserRepository,
    private readonly now: () => number,
    private readonly offers: OfsOfferRepository,
    private readonly holidays: Pick<TradingHolidayRepository, 'calendar'>,
  ) {}

  async listIssues(caller: Caller): Promise<OfsIssuesData> {
    const now = this.now();
    const registrations = await this.issues.listRegistrations();
    registrations.sort((a, b) => byNewestWindows(a.issue, b.issue));
    return {
      server_time: instant(now),
      issues: registrations.map((registration) => toOfsIssueEntry(registration, caller.category, now)),
    };
  }

  /** The book of one issue: 403 for a caller who is not an operator (before anything about the issue), then 404. */
  async operatorBook(caller: Caller, exchange: string, scripToken: number): Promise<OfsBookData> {
    await this.requireOperator(caller);
    const registration = await this.issues.findRegistration(exchange, scripToken);
    if (registration === undefined) {
      throw new ApiError(Errors.OFS_ISSUE_UNKNOWN, `No OFS issue ${exchange} ${scripToken} is registered`, [
        { field: 'scrip_token', message: 'no such issue' },
      ]);
    }
    // Read after the issue, so that an allocation that ran in between shows its allotments.
    const sums = await this.book.sums(exchange, scripToken);
    const now = this.now();
    const book = ofsBook(registration.issue, sums.live);
    const allocated = registration.allocatedAt !== null;
    return {
      server_time: instant(now),
      issue: toOfsIssueEntry(registration, caller.category, now),
      offer: { total: book.offer.total, retail: book.offer.retail, non_retail: book.offer.nonRetail },
      ...toDemand(book),
      allotted: allocated ? toAllotted(allottedBook(sums.allotted)) : null,
      // After the allocation no bid is live: the demand it took (allotted, not allotted, or still waiting for
      // its answer) stays for the chart, and implies the allocation's own portions and clearing prices.
      at_close: allocated ? toDemand(ofsBook(registration.issue, sums.placed)) : null,
    };
  }

  /**
   * The book of one offer (operators only; 403 first, then 404): the offer as its read call answers it,
   * and the broker's bids per category and listing (open and allotted), with the open non-retail demand by
   * price.
   */
  async operatorOfferBook(caller: Caller, offerId: string): Promise<OfsOfferBookData> {
    await this.requireOperator(caller);
    const registration = await this.offers.find(offerId);
    if (registration === undefined) {
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `No OFS offer has offer_id ${JSON.stringify(offerId)}`, [
        { field: 'offer_id', message: 'no such offer' },
      ]);
    }
    const [latest] = await this.offers.indicativeHistory(offerId, 1);
    const book = offerBook(registration.offer, await this.book.offerSums(offerId));
    const figures = (f: OfferBookFigures) => ({
      bids: f.bids,
      open_quantity: f.openQuantity,
      allotted_quantity: f.allottedQuantity,
      allotted_value: Number(f.allottedValuePaise) / 100,
    });
    const now = this.now();
    return {
      server_time: instant(now),
      offer: toOfferEntry(registration, now, latest, await this.holidays.calendar()),
      categories: book.categories.map((c) => ({
        category: c.category,
        ...figures(c),
        by_listing: c.byListing.map((l) => ({ exchange: l.exchange, scrip_token: l.scripToken, ...figures(l) })),
      })),
      non_retail_demand: book.nonRetailDemand.map((level) => ({
        price: rupees(level.pricePaise),
        quantity: level.quantity,
        cumulative: level.cumulative,
        bids: level.bids,
      })),
    };
  }

  /** The operator flag is read on every call, so that `ordergate users set-operator <id> false` takes effect at once. */
  private async requireOperator(caller: Caller): Promise<void> {
    if ((await this.users.find(caller.userId))?.operator === true) return;
    throw new ApiError(
      Errors.OPERATOR_REQUIRED,
      'This call is for operators; `ordergate users set-operator <user_id> true` makes a user one',
    );
  }
}
