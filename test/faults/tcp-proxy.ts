/**
 * A TCP proxy between the app and PostgreSQL that can fake an outage: every open connection is cut, and
 * new ones are either refused (the listener is closed) or blackholed (accepted, never forwarded, never
 * answered), as when the database host is down or unreachable. restore() forwards again on the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * refuse: the host is down (connections cut, new ones refused); blackhole: unreachable (cut, new ones never
 * answered); partition: the network drops packets silently (open connections stay open but nothing passes
 * any more, without a reset; new ones never answered).
 */
export type OutageMode = 'refuse' | 'blackhole' | 'partition';

export class TcpProxy {
  private server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[client: Socket, upstream: Socket]>();
  private mode: 'forward' | OutageMode = 'forward';

  private constructor(
    private readonly target: { host: string; port: number },
    public port: number,
  ) {
    this.server = this.createListener();
  }

  /** Listens on a free port of 127.0.0.1 and forwards to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, 0);
    await proxy.listen();
    return proxy;
  }

  private createListener(): Server {
    return createServer((client) => {
      this.track(client);
      if (this.mode !== 'forward') return; // blackholed: held open, never answered
      const upstream = connect(this.target);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.on('close', () => this.pairs.delete(pair));
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: '127.0.0.1', port: this.port }, () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  private cutAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** The database goes away: open connections are cut, new ones refused or blackholed. */
  async outage(mode: OutageMode): Promise<void> {
    this.mode = mode;
    if (mode === 'partition') {
      // Nothing passes any more, and nobody is told.
      for (const [client, upstream] of this.pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      return;
    }
    this.cutAll();
    if (mode === 'refuse') await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The database is back, on the same port. */
  async restore(): Promise<void> {
    if (this.mode === 'forward') return;
    const wasRefusing = this.mode === 'refuse';
    this.mode = 'forward';
    // Blackholed connections are dropped: their clients gave up on them long ago.
    this.cutAll();
    if (wasRefusing) {
      this.server = this.createListener();
      await this.listen();
    }
  }

  async close(): Promise<void> {
    this.cutAll();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
