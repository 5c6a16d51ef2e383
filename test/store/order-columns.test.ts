/**
 * The write plan decides that a stored order changed (storedOrderChanged); the repository writes the
 * columns an order change may set (MUTABLE_COLUMNS). They must name the same fields, or a change would be
 * decided and not written, or written without being decided.
 */
import { expect, it } from 'vitest';
import { storedOrderChanged } from '../../src/domain/orders/effects.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import type { Order } from '../../src/domain/orders/order.js';
import { MUTABLE_COLUMNS } from '../../src/store/orders/orders.js';
import { storedOrder } from '../support/fixtures.js';

const order: Order = storedOrder();

/** The order with one field set to a value it did not have. */
function withChanged(field: keyof Order): Order {
  const value = order[field];
  const other =
    typeof value === 'number' ? value + 1 : field === 'status' ? OrderStatus.CANCELLED : `${String(value ?? '')}x`;
  return { ...order, [field]: other } as Order;
}

it('decides a change of an order exactly when a column the repository writes on a change differs', () => {
  const fields = Object.keys(order) as (keyof Order)[];
  const decided = fields.filter((field) => storedOrderChanged(order, withChanged(field)));
  const written = fields.filter((field) =>
    MUTABLE_COLUMNS.some((column) => column.value(order) !== column.value(withChanged(field))),
  );
  expect(decided).toEqual(written);
  expect(decided.length).toBe(MUTABLE_COLUMNS.length);
});
