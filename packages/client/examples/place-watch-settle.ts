/**
 * A bid from placement to holding with @ordergate/client alone: log in, open the order events, place a
 * cut-off bid on the demo OFS issue, follow it until the exchange allots it, then wait until its shares
 * settle into a holding.
 *
 *   npx ordergate demo --json --close-in 30    # the demo issue, closing in 30 s; allotments settle 60 s later
 *   ORDERGATE_API_KEY=<api_key> npx tsx packages/client/examples/place-watch-settle.ts
 *
 * Settings (environment): ORDERGATE_URL (http://127.0.0.1:8080), ORDERGATE_USER (demo), ORDERGATE_PASSWORD
 * (ordergate-demo), ORDERGATE_API_KEY. Exits 0 once the holding is there, 1 if the bid is refused or ends
 * otherwise.
 */
import { OrdergateClient, OrdergateError, type OrderEvent } from '../src/index.js';

const FINISHED = new Set(['EXECUTED', 'CANCELLED', 'OMSREJECT', 'ORDERERROR']);
const SETTLEMENT_WAIT_MS = 5 * 60_000;

async function main(): Promise<number> {
  const apiKey = process.env.ORDERGATE_API_KEY;
  if (!apiKey) throw new Error('set ORDERGATE_API_KEY (the api_key of `npx ordergate demo --json`)');
  const client = new OrdergateClient({ baseUrl: process.env.ORDERGATE_URL ?? 'http://127.0.0.1:8080' });
  await client.login({
    userId: process.env.ORDERGATE_USER ?? 'demo',
    password: process.env.ORDERGATE_PASSWORD ?? 'ordergate-demo',
    apiKey,
  });

  // The stream is live only: open it before placing, so that no change of the bid is missed.
  const events = client.events();
  await events.opened;
  const { data } = await client.place({
    scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: 'RL-MKT', // a retail bid at the cut-off price
    quantity: '100',
    price: 0,
  });
  console.log(`placed ${data.orderId}`);

  let last: OrderEvent | undefined;
  for await (const event of events) {
    if (event.order_id !== data.orderId) continue;
    console.log(`${event.status}: ${event.reason}`);
    last = event;
    if (FINISHED.has(event.status)) break;
  }
  if (last?.status !== 'EXECUTED') return 1;
  console.log(`allotted ${last.order.traded_quantity} at ${last.order.traded_price}`);
  const balance = await client.balance();
  console.log(`funds: available ${balance.data.available}, debited ${balance.data.debited}`);

  const deadline = Date.now() + SETTLEMENT_WAIT_MS;
  while (Date.now() < deadline) {
    const holding = (await client.holdings()).data.find((entry) => entry.scrip_token === 500112);
    if (holding) {
      console.log(`settled: holding ${holding.quantity} ${holding.symbol} at ${holding.average_price}`);
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  console.log('the allotment did not settle in time');
  return 1;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(
    error instanceof OrdergateError
      ? `${error.code} (${error.status}, request ${error.requestId}): ${error.message}`
      : error,
  );
  process.exitCode = 1;
}
