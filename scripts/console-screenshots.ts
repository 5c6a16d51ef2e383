/**
 * `npm run screenshots`: the console's views as a reader of the README first sees them, desktop (1280 x 900)
 * and phone (390 x 844), written to docs/console/. Drives `npm start`'s server over a new demo database
 * (`ordergate demo`), places a few bids through the API (one cancelled, one at the cut-off), opens one cart,
 * registers the demo offer (`ordergate demo-offer`: day T open now) with non-retail bids from its NII and MF
 * users, so that the offers view shows a card with its indicative price and published demand, and
 * photographs every view of the header with Debian's Chromium. Run it after a change to the console's
 * look; the files it writes are committed.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { OrdergateClient } from '../packages/client/src/index.js';
import { EXAMPLE_ORDER_LINE } from '../src/schemas/ordercart.js';
import { ensureConsoleBuilt } from '../test/cli/build-dist.js';
import { ROOT } from '../test/cli/run-ordergate.js';
import { launchChromium } from '../test/support/chromium.js';
import { runOrdergate } from '../test/cli/run-ordergate.js';
import { logIn, openView } from '../test/support/console-page.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../test/support/demo-server.js';

const OUT = join(ROOT, 'docs', 'console');
const STEP_MS = 20_000;

/** Each view: its file name, its link in the header, and what shows once it has loaded. */
export const CONSOLE_VIEWS = [
  { file: 'issues', link: 'OFS issues', loaded: 'article[data-issue]' },
  { file: 'offers', link: 'OFS offers', loaded: 'section.indicative' },
  { file: 'orders', link: 'Orders', loaded: 'tr[data-order-id]' },
  { file: 'carts', link: 'Carts', loaded: 'form[aria-labelledby="cart-editor-title"]' },
  { file: 'funds', link: 'Funds and holdings', loaded: '[data-amount="cash"]' },
  { file: 'book', link: 'OFS book', loaded: 'svg.book-chart' },
] as const;

export const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

interface Demo {
  user_id: string;
  password: string;
  api_key: string;
  access_token: string;
}

async function seedOrders(api: OrdergateClient, demo: Demo): Promise<void> {
  const scrip = { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' } as const;
  const bid = { scrip_info: scrip, transaction_type: 'BUY', product_type: 'OFS' } as const;
  await api.place({ ...bid, order_type: 'RL', quantity: '40', price: 102 });
  await api.place({ ...bid, order_type: 'RL', quantity: '25', price: 101.5, order_identifier: 'ladder-2' });
  await api.place({ ...bid, order_type: 'RL-MKT', quantity: '60', price: 0 });
  const cancelled = await api.place({ ...bid, order_type: 'RL', quantity: '10', price: 101 });
  await api.cancel('NSE_EQ', cancelled.data.orderId);
  const line = { ...EXAMPLE_ORDER_LINE, Quantity: 20, Price: '101.50' };
  await api.createCart({
    ordercartName: 'Ladder for SBIN OF',
    orders: [
      line,
      { ...line, Quantity: 30, Price: '102.00' },
      { ...line, OrderType: 'RL-MKT', Quantity: 15, Price: '0' },
    ],
    version: '1',
    createdBy: demo.user_id,
    modifiedBy: demo.user_id,
    executedNoTime: 0,
  });
}

interface DemoOffer {
  users: (Demo & { category: string })[];
  offer: {
    symbol: string;
    floor_price: number;
    listings: { exchange: 'NSE_EQ' | 'BSE_EQ'; scrip_token: number; series: Record<string, string> }[];
  };
}

/** The demo offer, day T open now, with three non-retail bids on both listings: its card has figures to show. */
async function seedOffer(baseUrl: string, env: Record<string, string>): Promise<void> {
  const registered = await runOrdergate(['demo-offer', '--json'], { env });
  if (registered.code !== 0) throw new Error(`ordergate demo-offer: ${registered.stderr}`);
  const { users, offer } = JSON.parse(registered.stdout) as DemoOffer;
  const bidAt = async (category: string, listing: number, quantity: number, price: number) => {
    const user = users.find((u) => u.category === category)!;
    const { exchange, scrip_token, series } = offer.listings[listing]!;
    const api = new OrdergateClient({ baseUrl }).withToken(user.access_token, user.api_key);
    await api.place({
      scrip_info: { exchange, scrip_token, symbol: offer.symbol, series: series.NON_RETAIL! },
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL',
      quantity: String(quantity),
      price,
    });
  };
  await bidAt('NII', 0, 2_000, offer.floor_price + 1.5);
  await bidAt('NII', 1, 1_500, offer.floor_price + 0.5);
  await bidAt('MF', 0, 4_000, offer.floor_price + 2);
}

async function main(): Promise<void> {
  await ensureConsoleBuilt();
  mkdirSync(OUT, { recursive: true });
  const { dir, env } = demoWorkspace('ordergate-screenshots-');
  const { server, demo } = await startDemoServer<Demo>(env);
  const browser = await launchChromium(STEP_MS);
  try {
    const api = new OrdergateClient({ baseUrl: server.url }).withToken(demo.access_token, demo.api_key);
    await seedOrders(api, demo);
    await seedOffer(server.url, env);
    for (const size of SIZES) {
      const context = await browser.newContext({ viewport: size.viewport, timezoneId: 'Asia/Kolkata' });
      context.setDefaultTimeout(STEP_MS);
      const page = await context.newPage();
      await page.goto(`${server.url}/console/`);
      await page.locator('input[name="user_id"]').waitFor();
      await page.screenshot({ path: join(OUT, `login-${size.name}.png`) });
      await logIn(page, server.url, demo);
      for (const view of CONSOLE_VIEWS) {
        await openView(page, view.link);
        if (view.file === 'carts')
          await page
            .getByRole('button', { name: /^Open cart / })
            .first()
            .click();
        await page.locator(view.loaded).first().waitFor();
        // Let the live reads and the chart settle.
        await page.waitForTimeout(500);
        await page.screenshot({ path: join(OUT, `${view.file}-${size.name}.png`), fullPage: true });
        process.stdout.write(`${join('docs', 'console', `${view.file}-${size.name}.png`)}\n`);
      }
      await context.close();
    }
  } finally {
    await browser.close();
    await stopDemoServer(server, dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
