/** The order-event stream's wire shapes: the Last-Event-ID header and one event's JSON data. */
import Type, { type Static } from 'typebox';
import { OrderBookEntry } from './orders.js';

export const ORDER_UPDATE_EVENT = 'order_update';

export const OrderEventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,15}$',
      description:
        'The id of the last event received on an earlier connection: every later event of yours is sent first, then the live ones. Without it the stream is live only.',
    }),
  ),
});

export const OrderEvent = Type.Object(
  {
    event_id: Type.Integer({
      minimum: 1,
      description:
        "Your own count of order events: your first is 1, each next one is one more, with no gaps (it says nothing of other users' events). The same as the SSE `id:` line and the webhook's `X-Ordergate-Event-Id`.",
    }),
    type: Type.Literal(ORDER_UPDATE_EVENT),
    order_id: Type.String(),
    status: Type.String({ description: 'The status the change left the order in.' }),
    reason: Type.String({ description: 'Why the order changed.' }),
    at: Type.String({ format: 'date-time', description: 'When the change happened.' }),
    order: OrderBookEntry,
  },
  {
    additionalProperties: false,
    description:
      "One `data:` line of the stream. `order` is the order as this change left it, as the order's history entry shows it (`GET /transactional/v1/orders/{order_id}`).",
  },
);
export type OrderEvent = Static<typeof OrderEvent>;
