/** Whether something accepts TCP connections at a URL's host and port (2 s at most): the tests' probe for PostgreSQL and Redis. */
import { connect } from 'node:net';

export function tcpReachable(url: URL, defaultPort: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
