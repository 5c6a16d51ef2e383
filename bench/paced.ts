/**
 * A steady load: one request every 1/rate seconds, whatever the answers (an open loop), each timed from
 * the moment it was due, so that a server that falls behind is charged for the wait it causes (no
 * coordinated omission). autocannon's `overallRate` is not steady: each connection sends its share of a
 * second back to back at the start of the second and then waits, so that "1,000 bids/s" arrives as a burst
 * at full speed every second, and the latencies measured are those of saturation (docs/design/performance-log.md).
 */
import { Pool } from 'undici';

export interface PacedLoadOptions {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  origin: string;
  path: string;
  body: string;
  /** Keep-alive connections the requests are spread over. */
  connections: number;
  seconds: number;
  /** Requests per second. */
  rate: number;
  /** The headers of the i-th request. */
  headersOf: (i: number) => Record<string, string>;
}

export interface PacedLoadResult {
  /** Answers with a 2xx status. */
  ok: number;
  /** Other answers, and requests that got none. */
  failed: number;
  /** From the first request's due time to the last answer. */
  durationS: number;
  /** Each request's time from due to answered, in milliseconds. */
  latenciesMs: number[];
}

export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const { origin, path, body, connections, seconds, rate, headersOf } = options;
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const interval = 1000 / rate;
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let lastAnswer = 0;
  const answers: Promise<void>[] = [];
  const start = performance.now() + 5;
  const send = (i: number) => {
    const due = start + i * interval;
    const answered = () => {
      lastAnswer = performance.now();
      latencies.push(lastAnswer - due);
    };
    answers.push(
      pool.request({ path, method: 'POST', headers: headersOf(i), body }).then(
        async (response) => {
          await response.body.dump();
          answered();
          if (response.statusCode >= 200 && response.statusCode < 300) ok += 1;
          else failed += 1;
        },
        () => {
          answered();
          failed += 1;
        },
      ),
    );
  };
  try {
    await new Promise<void>((resolve) => {
      let sent = 0;
      const tick = () => {
        const now = performance.now();
        // Whatever is due by now goes now (a late timer sends its backlog at once, timed from when it was due).
        while (sent < total && start + sent * interval <= now) send(sent++);
        if (sent === total) resolve();
        else setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
      };
      setTimeout(tick, 5);
    });
    await Promise.all(answers);
  } finally {
    await pool.close();
  }
  return { ok, failed, durationS: (lastAnswer - start) / 1000, latenciesMs: latencies };
}
