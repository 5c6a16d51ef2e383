/** Builds the services of one process over an open store: used by the server, the CLI and the tests. */
import type { AppServices } from './app.js';
import { AuthService } from './services/auth.js';
import { OrderCartService } from './services/order-carts.js';
import { OrderEntryService } from './services/order-entry.js';
import type { Store } from './store/database.js';
import { GroupCommitter } from './store/group-commit.js';
import { OfsIssueRepository } from './store/ofs-issues.js';
import { OrderCartRepository } from './store/order-carts.js';
import { OrderRepository } from './store/orders.js';
import { UserRepository } from './store/users.js';

export interface ServiceOptions {
  tokenTtlSeconds: number;
  /** The clock, injectable so that tests can move time. */
  now?: () => number;
}

export function createServices(store: Store, options: ServiceOptions): AppServices {
  const now = options.now ?? Date.now;
  const users = new UserRepository(store.db, store.readDb);
  return {
    auth: new AuthService(users, options.tokenTtlSeconds * 1000, now),
    orderEntry: new OrderEntryService(new OfsIssueRepository(store.db), new OrderRepository(store.db), new GroupCommitter(store.db), now),
    orderCarts: new OrderCartService(new OrderCartRepository(store.db), now),
  };
}
