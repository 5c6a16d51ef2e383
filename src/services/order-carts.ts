/**
 * Order carts: create, list, details, update and delete. The order of checks: the request alone (400:
 * schema and the name, then the `orders` lines), then the cart's owner (404: another user's cart does not
 * exist for the caller), then who writes (403), then the state the caller read (412 If-Match, 409
 * executedNoTime), then the OFS lines' prices against their registered issues (422: tick and floor).
 * Execution places each line through order entry, as a single bid, at the caller's order rate
 * (docs/design/order-carts.md). A user keeps at most MAX_CARTS_PER_USER carts; the list is paged.
 */
import { DEFAULT_LIMITS, type Limits } from '../config.js';
import { timeOrderedId } from '../ids.js';
import {
  asLineViolations,
  executionOutcome,
  failedLine,
  matchOfsIssue,
  ROUTABLE_PRODUCT,
  type LineResult,
} from '../domain/orders/cart-placement.js';
import {
  lineBid,
  parseCartOrders,
  registeredIssueViolations,
  unplaceableLineViolations,
} from '../schemas/cart-lines.js';
import { ApiError, Errors, type Violation } from '../domain/errors.js';
import type { OfsIssue } from '../domain/ofs/issue/issue.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import {
  DEFAULT_CART_PAGE_SIZE,
  type CreateOrderCartRequest,
  type OrderCart,
  type OrderCartListQuery,
  type OrderLine,
  type UpdateOrderCartRequest,
} from '../schemas/ordercart.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import { cartNameViolations, type StoredOrderCart } from '../domain/orders/cart.js';
import { toOrderCart } from '../schemas/mappers/ordercart.js';
import type { OrderCartRepository } from '../store/orders/carts.js';
import type { Caller } from './auth.js';
import type { AnswerInTransaction, KeptSteps } from './idempotency.js';
import type { OrderEntryService } from './order-entry.js';

/** A strong entity tag derived from the cart's revision, which every change bumps. */
export function cartEtag(revision: number): string {
  return `"${revision}"`;
}

/** If-Match (RFC 9110, 13.1.1): "*" or a list of entity tags, compared strongly (a weak tag never matches). */
export function ifMatchAllows(ifMatch: string, etag: string): boolean {
  const value = ifMatch.trim();
  return value === '*' || value.split(',').some((tag) => tag.trim() === etag);
}

export interface OrderCartPage {
  data: OrderCart[];
  metadata: PageMetadata;
}

/** The list's page from its query (the schema has checked that offset and limit are digit strings in range). */
function cartPageOf(query: OrderCartListQuery): { page: number; pageSize: number } {
  return {
    page: query.offset === undefined ? 1 : Number(query.offset),
    pageSize: query.limit === undefined ? DEFAULT_CART_PAGE_SIZE : Number(query.limit),
  };
}

export interface OrderCartDetails {
  cart: OrderCart;
  etag: string;
}

/** The name and the lines of a cart to save, checked on the request alone (400). */
function validLines(name: string, orders: string): OrderLine[] {
  // The name's rule comes with the body's schema, before the lines (the schema holds the rest of it).
  ApiError.throwIfAny(cartNameViolations(name));
  const result = parseCartOrders(orders);
  if (!result.ok) throw ApiError.fromViolations(result.violations);
  return result.lines;
}

function notFound(ordercartId: string): ApiError {
  return new ApiError(Errors.CART_NOT_FOUND, `You have no order cart with ordercartId ${ordercartId}`, [
    { field: 'ordercartId', message: 'no order cart of yours has this id' },
  ]);
}

/** The kept steps of an execution with an idempotency key: the lines read, each line's result, the count. */
const LINES_STEP = 'lines';
const COUNTED_STEP = 'counted';
const lineStep = (index: number) => `line:${index}`;

/**
 * What executing a cart needs: the place-order path of a single bid and the registry of OFS issues (which
 * saving a cart reads too, to check its OFS lines' prices).
 */
export interface CartPlacement {
  orderEntry: Pick<OrderEntryService, 'placeOfsBid'>;
  issues: Pick<OfsIssueRepository, 'list'>;
  /**
   * Throws the 401/403 a call would get once the caller's session has ended (a logout, the operator's
   * revocation, its expiry, a disabled user): a line is placed only while it stands. Absent: not checked.
   */
  recheckSession?: (caller: Caller) => Promise<void>;
}

/**
 * The caller's order rate as an execution meets it (docs/design/rate-limits.md): `take` resolves once one
 * more order may be placed, and counts it in the caller's order-entry log, the one single bids count in.
 */
export interface OrderSlots {
  take(): Promise<void>;
}

/** No order limit (RATE_LIMITS_OFF, or a caller outside HTTP): nothing waits. */
const UNLIMITED_SLOTS: OrderSlots = { take: async () => undefined };

/** An execution that placed at least one line (one that placed none answers 422 e-412). */
export interface CartExecution {
  allPlaced: boolean;
  lines: LineResult[];
}

export class OrderCartService {
  constructor(
    private readonly carts: OrderCartRepository,
    private readonly now: () => number,
    private readonly placement: CartPlacement,
    private readonly limits: Pick<Limits, 'cartsPerUser' | 'cartExecutionsPerUser'> = DEFAULT_LIMITS,
  ) {}

  /** The executions of each user running on this node (placing their lines, paced to the order rate). */
  private readonly running = new Map<string, number>();

  /**
   * Creates a cart owned by the caller and answers its id; 422 e-417, creating nothing, when the caller
   * already keeps MAX_CARTS_PER_USER carts (counted and inserted as one step, so that concurrent creates
   * cannot pass the cap together).
   */
  async create(caller: Caller, request: CreateOrderCartRequest): Promise<string> {
    const lines = validLines(request.ordercartName, request.orders);
    ApiError.throwIfAny(
      (['createdBy', 'modifiedBy'] as const)
        .filter((field) => request[field] !== caller.userId)
        .map((field) => ({
          kind: Errors.CART_USER_MISMATCH,
          field,
          message: `${field} must be your own user id, ${caller.userId}`,
        })),
    );
    ApiError.throwIfAny(await this.priceViolationsAtSave(lines));
    const ordercartId = timeOrderedId();
    const cap = this.limits.cartsPerUser;
    const created = await this.carts.insertWithinCap(
      {
        ordercartId,
        userId: caller.userId,
        name: request.ordercartName,
        ordersJson: JSON.stringify(lines),
        version: request.version,
      },
      this.now(),
      cap,
    );
    if (!created) {
      throw new ApiError(
        Errors.CART_LIMIT,
        `You already keep ${cap} order carts, the most one user may keep; delete one before creating another`,
        [{ field: '', message: `at most ${cap} order carts per user` }],
      );
    }
    return ordercartId;
  }

  /** One page of the caller's carts, newest first, with how many the caller keeps. */
  async list(caller: Caller, query: OrderCartListQuery): Promise<OrderCartPage> {
    const { page, pageSize } = cartPageOf(query);
    const { carts, totalCount } = await this.carts.listOwned(caller.userId, page, pageSize);
    return { data: carts.map(toOrderCart), metadata: { total_records: totalCount, offset: page, limit: pageSize } };
  }

  async details(caller: Caller, ordercartId: string): Promise<OrderCartDetails> {
    const cart = await this.ownCart(caller, ordercartId);
    return { cart: toOrderCart(cart), etag: cartEtag(cart.revision) };
  }

  /**
   * Replaces the cart's name and orders and answers its new ETag. `ifMatch` is the If-Match header, if
   * sent.
   */
  async update(caller: Caller, request: UpdateOrderCartRequest, ifMatch: string | undefined): Promise<string> {
    const lines = validLines(request.ordercartName, request.orders);
    // Read once, by the first pass that gets this far: the registry does not change with the cart.
    let priceFaults: Promise<Violation[]> | undefined;
    const changes = {
      name: request.ordercartName,
      ordersJson: JSON.stringify(lines),
      version: request.version,
      modifiedBy: request.modifiedBy,
    };
    // Optimistic concurrency: the write happens only if the cart is still the one the checks ran against.
    // A miss means another request changed the cart in between: the checks run again on its new state, so
    // no update is judged on a state it does not replace. Each miss is another request's committed write.
    for (;;) {
      const cart = await this.ownCart(caller, request.ordercartId);
      ApiError.throwIfAny(writerViolations(caller, request, cart));
      const etag = cartEtag(cart.revision);
      if (ifMatch !== undefined && !ifMatchAllows(ifMatch, etag)) {
        throw new ApiError(
          Errors.CART_PRECONDITION_FAILED,
          'The cart has changed since you read it: If-Match does not match its current ETag; read it again',
          [{ field: 'If-Match', message: `does not match the current ETag ${etag}` }],
          { ETag: etag },
        );
      }
      if (request.executedNoTime !== cart.executedNoTime) {
        throw new ApiError(
          Errors.CART_EXECUTED_STALE,
          `The cart was executed since you read it: executedNoTime is ${cart.executedNoTime}, not ${request.executedNoTime}; read it again`,
          [{ field: 'executedNoTime', message: `must be the stored count, ${cart.executedNoTime}` }],
        );
      }
      ApiError.throwIfAny(await (priceFaults ??= this.priceViolationsAtSave(lines)));
      const checked = { revision: cart.revision, executedNoTime: cart.executedNoTime };
      if (await this.carts.replaceIfUnchanged(cart.ordercartId, caller.userId, checked, changes, this.now())) {
        return cartEtag(cart.revision + 1);
      }
    }
  }

  /**
   * Places the cart's lines, in order, each as a single bid would be placed, and answers line by line.
   * The lines are read once, at the start: an update or a delete that commits meanwhile changes neither
   * which lines are placed nor their answer. An execution that placed at least one order is counted once,
   * after the last line, together with a new revision; one that placed none answers 422 e-412, uncounted.
   *
   * `steps`, for a request with an idempotency key, keeps the lines read, each line's result (a placed
   * line's in the transaction of its order) and the count, so that a run of the same request after a
   * crash or a 5xx places no line twice and counts the execution once: it places only the lines no run
   * has kept, takes the kept results of the others, and answers what one uninterrupted run would have
   * (docs/design/idempotency.md).
   *
   * `slots` paces the orders to the caller's order rate: each line that reaches order entry first takes
   * a slot, waiting for one when the caller's last second is full, so that a cart never places more orders
   * in any one second than the caller's limit. The execution runs to its end once started, whether or not
   * the client is still connected; so at most MAX_CART_EXECUTIONS_PER_USER of one user's run at once on a
   * node, and one more answers 429 e-429 with Retry-After, placing nothing (else a client that leaves and
   * calls again would pile up executions faster than the order rate drains them).
   */
  async execute(
    caller: Caller,
    ordercartId: string,
    requestId: string | null,
    steps?: KeptSteps,
    slots: OrderSlots = UNLIMITED_SLOTS,
  ): Promise<CartExecution> {
    const running = this.running.get(caller.userId) ?? 0;
    if (running >= this.limits.cartExecutionsPerUser) {
      throw new ApiError(
        Errors.RATE_LIMITED,
        `${running} executions of your carts are still placing their lines (at most ${this.limits.cartExecutionsPerUser} at once); retry when one has ended`,
        [],
        { 'Retry-After': '1' },
      );
    }
    this.running.set(caller.userId, running + 1);
    try {
      return await this.executeLines(caller, ordercartId, requestId, steps, slots);
    } finally {
      const left = (this.running.get(caller.userId) ?? 1) - 1;
      if (left === 0) this.running.delete(caller.userId);
      else this.running.set(caller.userId, left);
    }
  }

  private async executeLines(
    caller: Caller,
    ordercartId: string,
    requestId: string | null,
    steps: KeptSteps | undefined,
    slots: OrderSlots,
  ): Promise<CartExecution> {
    const cart = await this.ownCart(caller, ordercartId);
    let lines = JSON.parse(cart.ordersJson) as unknown[];
    const kept = (await steps?.recall({ [LINES_STEP]: lines })) ?? new Map<string, unknown>();
    if (kept.has(LINES_STEP)) lines = kept.get(LINES_STEP) as unknown[];
    const count = async () => {
      if (steps === undefined) await this.carts.recordExecution(cart.ordercartId, caller.userId);
      else await steps.once(COUNTED_STEP, (trx) => this.carts.recordExecution(cart.ordercartId, caller.userId, trx));
    };
    // The registry is read once per execution, when the first OFS line needs it.
    let registry: Promise<OfsIssue[]> | undefined;
    const issues = () => (registry ??= this.placement.issues.list());
    const results: LineResult[] = [];
    /** Why the session ended while the lines were placed; the lines from then on are not placed. */
    let ended: ApiError | undefined;
    for (const [index, line] of lines.entries()) {
      const step = lineStep(index);
      const recalled = kept.get(step) as LineResult | undefined;
      if (recalled !== undefined) {
        results.push(recalled);
        continue;
      }
      if (ended !== undefined) {
        results.push(sessionEndedLine(index, ended));
        continue;
      }
      try {
        const answer = steps?.inTransaction<string>(step, (orderId): LineResult => ({
          index,
          status: 'success',
          orderId,
        }));
        const result = await placeLine(this.placement, slots, caller, line, index, issues, requestId, answer);
        if (result.status === 'error') await steps?.keep(step, result);
        results.push(result);
      } catch (error) {
        if (error instanceof SessionEnded) {
          ended = error.cause;
          results.push(sessionEndedLine(index, ended));
          continue;
        }
        // Not a refusal of the line (the database failed, say): orders already placed stay placed and
        // are in the order book; the execution is still counted if it can be.
        if (results.some((result) => result.status === 'success')) await count().catch(() => undefined);
        throw error;
      }
    }
    const outcome = executionOutcome(results);
    if (outcome === 'none-placed') {
      throw new ApiError(
        Errors.CART_NOTHING_PLACED,
        `No line of the cart could be placed: ${results.length} of ${results.length} failed; errors names the faults of each line`,
        results.flatMap((result) => (result.status === 'error' ? result.errors : [])),
      );
    }
    // Nothing is counted when the cart was deleted meanwhile: its orders are placed all the same.
    await count();
    return { allPlaced: outcome === 'all-placed', lines: results };
  }

  async delete(caller: Caller, ordercartId: string): Promise<void> {
    if (!(await this.carts.deleteOwned(ordercartId, caller.userId))) throw notFound(ordercartId);
  }

  /**
   * The faults of the OFS lines of registered issues against those issues' tick and floor (422, named
   * orders[i].Price), checked when a cart is saved; the registry is read only when a line is OFS.
   */
  private async priceViolationsAtSave(lines: readonly OrderLine[]): Promise<Violation[]> {
    if (!lines.some((line) => line.ProductType === ROUTABLE_PRODUCT)) return [];
    return registeredIssueViolations(lines, await this.placement.issues.list());
  }

  /** The caller's cart; another user's cart answers exactly like one that does not exist. */
  private async ownCart(caller: Caller, ordercartId: string): Promise<StoredOrderCart> {
    const cart = await this.carts.findOwned(ordercartId, caller.userId);
    if (cart === undefined) throw notFound(ordercartId);
    return cart;
  }
}

/**
 * Who may write the update: modifiedBy is the caller, and createdBy the cart's creator. Only the creator
 * can see a cart, so a createdBy that is not the caller's id fails the creator rule.
 */
function writerViolations(caller: Caller, request: UpdateOrderCartRequest, cart: StoredOrderCart): Violation[] {
  const violations: Violation[] = [];
  if (request.createdBy !== cart.createdBy) {
    violations.push({
      kind: Errors.CART_CREATOR_MISMATCH,
      field: 'createdBy',
      message: 'createdBy must be the creator of this cart, your own user id',
    });
  }
  if (request.modifiedBy !== caller.userId) {
    violations.push({
      kind: Errors.CART_USER_MISMATCH,
      field: 'modifiedBy',
      message: `modifiedBy must be your own user id, ${caller.userId}`,
    });
  }
  return violations;
}

/** The session of an execution ended (`cause` says how): its remaining lines are not placed. */
class SessionEnded extends Error {
  constructor(override readonly cause: ApiError) {
    super(cause.message);
  }
}

/** A line not placed because the session that executes the cart ended before it: the answer a call would get now. */
function sessionEndedLine(index: number, ended: ApiError): LineResult {
  const message = `orders[${index}] not placed: the session ended before this line (${ended.kind.code}: ${ended.message})`;
  return { ...failedLine(index, [{ kind: ended.kind, field: `orders[${index}]`, message }]), message };
}

/**
 * One line: its own rules and product, the OFS issue it names, its bid's schema, then (once it has an
 * order slot) the single-bid path (order entry), whose refusal becomes the line's answer. Anything but a
 * refusal (a 5xx) is thrown. A line refused before order entry takes no slot: it places nothing.
 */
async function placeLine(
  placement: CartPlacement,
  slots: OrderSlots,
  caller: Caller,
  line: unknown,
  index: number,
  issues: () => Promise<OfsIssue[]>,
  requestId: string | null,
  answer: AnswerInTransaction<string> | undefined,
): Promise<LineResult> {
  const unplaceable = unplaceableLineViolations(line, index);
  if (unplaceable.length > 0) return failedLine(index, unplaceable);
  const ofsLine = line as OrderLine;
  const match = matchOfsIssue(ofsLine, index, await issues());
  if (!match.ok) return failedLine(index, match.violations);
  const checked = lineBid(ofsLine, index, match.issue);
  if (!checked.ok) return failedLine(index, checked.violations);
  await slots.take();
  // The execution may have waited for its slots since the call was authenticated.
  if (placement.recheckSession !== undefined) {
    try {
      await placement.recheckSession(caller);
    } catch (error) {
      if (error instanceof ApiError && error.kind.status < 500) throw new SessionEnded(error);
      throw error;
    }
  }
  try {
    const orderId = await placement.orderEntry.placeOfsBid(caller, checked.bid, requestId, answer);
    return { index, status: 'success', orderId };
  } catch (error) {
    // The request lost its idempotency key (it was taken over): it ends here, refused as a whole. A line over
    // SEBI's threshold (e-603) is refused like any other line: the rule says refused, not queued.
    if (
      !(error instanceof ApiError) ||
      error.kind.status >= 500 ||
      error.kind === Errors.RATE_LIMITED ||
      error.kind === Errors.IDEMPOTENCY_KEY_RUNNING
    )
      throw error;
    const causes = error.errors.length > 0 ? error.errors : [{ field: '', message: error.message }];
    const violations = asLineViolations(
      index,
      causes.map((cause) => ({ ...cause, kind: error.kind })),
    );
    return { ...failedLine(index, violations), message: error.message };
  }
}
