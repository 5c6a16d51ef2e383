/**
 * The simulated exchange's market for the issues of the one-listing model: it takes a bid while the
 * bidder's window is open and its terms are the issue's, changes it while the window is open, and at the
 * later close of the two windows allocates the issue once (src/domain/ofs/issue/allocation.ts), leaving an
 * event per bid for the OMS.
 */
import { allocateOfs, type AllocationBid } from '../../domain/ofs/issue/allocation.js';
import { issueInstrument } from '../../domain/ofs/instrument-keys.js';
import { allocationViolations, isBidderCategory, termsViolations, windowViolations } from '../../domain/ofs/rules.js';
import type { OfsIssueRepository } from '../../store/ofs/issues.js';
import type { DueIssue, NewSimEvent, SimBid, SimExchangeRepository } from '../../store/ofs/sim-exchange.js';
import type { Store } from '../../store/sql/database.js';
import type { StoreTx } from '../../store/sql/write-tx.js';
import type { ExchangeBid } from '../exchange.js';
import type { InstrumentGuard } from '../instrument-guard.js';
import { firstReason, notLive, sentence, type SimChange, type SimMarket } from './market.js';

export class IssueMarket implements SimMarket {
  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly book: SimExchangeRepository,
    private readonly issues: OfsIssueRepository,
    private readonly guard: InstrumentGuard,
  ) {}

  /** Why the exchange refuses a new bid in an issue (null: it takes it): the issue listed, its window open, the terms. */
  placements(tx: StoreTx): (bid: ExchangeBid, now: number) => Promise<string | null> {
    const issueOf = this.issues.reader(tx);
    return async (bid, now) => {
      const issue = await issueOf(bid.exchange, bid.scripToken);
      if (issue === undefined) return `The exchange does not list ${bid.exchange} ${bid.scripToken} as an OFS`;
      return firstReason([...windowViolations(issue, bid.category, now), ...termsViolations(bid, issue, bid.category)]);
    };
  }

  /** A bid may change while it is live, its issue listed and its window open; new terms are the issue's. None is carried forward. */
  async changeRefusal(tx: StoreTx, bid: SimBid, change: SimChange, now: number): Promise<string | null> {
    if (change.action === 'carry') return 'the bid is not a bid in an offer';
    const gone = notLive(bid);
    if (gone !== null) return gone;
    const issue = await this.issues.find(bid.exchange, bid.scripToken, tx);
    if (issue === undefined) return `the exchange no longer lists ${bid.exchange} ${bid.scripToken} as an OFS`;
    if (!isBidderCategory(bid.category)) return `unknown bidder category ${bid.category}`;
    const closed = firstReason(windowViolations(issue, bid.category, now));
    if (closed !== null) return closed;
    return change.action === 'modify' ? firstReason(termsViolations(change.terms, issue, bid.category)) : null;
  }

  async step(now: number): Promise<void> {
    // Each issue's allocation apart: one that fails stops none of the others (instrument-guard.ts).
    for (const issue of await this.book.issuesDueForAllocation(now)) {
      await this.guard.run(issueInstrument(issue.exchange, issue.scripToken), 'allocation', () =>
        this.allocate(issue, now),
      );
    }
  }

  /**
   * Allocates one issue, if this caller is the one that claims it; the claim, the bids' outcomes and the
   * events are one transaction, so allocation happens exactly once and completely.
   */
  private async allocate(due: DueIssue, now: number): Promise<void> {
    await this.store.writeTransaction(async (tx) => {
      if (!(await this.book.claimAllocation(tx, due, now))) return;
      const issue = (await this.issues.find(due.exchange, due.scripToken, tx))!;
      const eligible: AllocationBid[] = [];
      const settled: NewSimEvent[] = [];
      for (const live of await this.book.liveBids(tx, due)) {
        if (!isBidderCategory(live.category)) {
          settled.push({
            orderId: live.orderId,
            kind: 'NOT_ALLOTTED',
            quantity: 0,
            pricePaise: null,
            reason: `Not allotted: unknown bidder category ${live.category}`,
            day: null,
          });
          continue;
        }
        const bid = {
          orderId: live.orderId,
          category: live.category,
          pricePaise: live.pricePaise,
          quantity: live.quantity,
          placedSeq: live.receivedAt,
        };
        const [violation] = allocationViolations(live, issue, bid.category);
        if (violation === undefined) {
          eligible.push(bid);
          continue;
        }
        // The issue was re-imported with other prices since the bid was accepted: it cannot take part.
        settled.push({
          orderId: live.orderId,
          kind: 'NOT_ALLOTTED',
          quantity: 0,
          pricePaise: null,
          reason: `Not allotted: at close ${violation.message}`,
          day: null,
        });
      }
      const result = allocateOfs({ ...issue, bids: eligible });
      for (const allotment of result.allotments) {
        const kind = allotment.allottedQuantity > 0 ? 'ALLOTTED' : 'NOT_ALLOTTED';
        settled.push({
          orderId: allotment.orderId,
          kind,
          quantity: allotment.allottedQuantity,
          pricePaise: allotment.pricePaise,
          reason: sentence(allotment.reason),
          day: null,
        });
      }
      // The claim makes this the one allocation of the issue, and the live bids are locked since they were
      // read: each is settled once, with one event.
      await this.book.settleAll(tx, settled, now);
    });
  }
}
