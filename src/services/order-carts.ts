/** Order carts: create, list, details, update and delete (placeholder until the cart module lands). */
import type { Kysely } from 'kysely';
import type { Database } from '../store/tables.js';

export class OrderCartService {
  constructor(
    readonly db: Kysely<Database>,
    readonly now: () => number,
  ) {}
}
