/**
 * The baseline the benchmark compares against, run in its own child process: a bare Fastify 5 server
 * answering the place-order POST with the same success envelope, no checks and no storage. It prints one
 * JSON line on stdout: {url}.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
let n = 0;
app.post('/transactional/v1/orders/regular', async () => ({
  status: 'success',
  code: 's-101',
  message: 'Order Entry Sent to OMS',
  data: { orderId: String(++n) },
}));
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);
// End on the benchmark's kill with a normal exit, so that `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
