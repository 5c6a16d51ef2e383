/** An order cart on the wire (OrderCart, ODIN's names), from the cart as stored. */
import type { StoredOrderCart } from '../../domain/orders/cart.js';
import type { OrderCart, OrderLine } from '../ordercart.js';

/** The cart with its lines as saved (their JSON, checked when it was saved) and its times in ISO 8601. */
export function toOrderCart(cart: StoredOrderCart): OrderCart {
  return {
    ordercartId: cart.ordercartId,
    ordercartName: cart.name,
    orders: JSON.parse(cart.ordersJson) as OrderLine[],
    version: cart.version,
    createdBy: cart.createdBy,
    modifiedBy: cart.modifiedBy,
    executedNoTime: cart.executedNoTime,
    createdAt: new Date(cart.createdAt).toISOString(),
    modifiedAt: new Date(cart.updatedAt).toISOString(),
  };
}
