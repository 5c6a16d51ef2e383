import { Errors, type Violation } from '../errors.js';

/** An order cart as stored: its lines (validated when written) and what its optimistic concurrency checks. */
export interface StoredOrderCart {
  ordercartId: string;
  /** The creator, who alone may see, change, execute or delete the cart. */
  userId: string;
  name: string;
  /** The validated order lines, as the JSON array text they were stored as. */
  ordersJson: string;
  version: string;
  executedNoTime: number;
  createdBy: string;
  modifiedBy: string;
  /** Bumped on every change; the ETag is derived from it. */
  revision: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * The rule of a cart's name that its schema cannot say: a name of white space only (spaces, no-break spaces,
 * ...) shows as no name at all, so it is refused like an empty one (e-411). The schema
 * (src/schemas/ordercart.ts) holds the rest: 1 to 100 characters, no control character. The name is kept
 * as sent otherwise: leading and trailing spaces of a name with other characters stay.
 */
export function cartNameViolations(name: string): Violation[] {
  if (name.trim() !== '') return [];
  return [
    {
      kind: Errors.CART_NAME,
      field: 'ordercartName',
      message: 'ordercartName must hold a character other than white space: a name of spaces only shows as no name',
    },
  ];
}
