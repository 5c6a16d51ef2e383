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
