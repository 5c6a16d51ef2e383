/** /transactional/v1/ordercart routes (placeholder until the cart module lands). */
import type { OrderCartService } from '../services/order-carts.js';
import type { App } from '../app.js';

export function registerOrderCartRoutes(_app: App, _carts: OrderCartService): void {}
