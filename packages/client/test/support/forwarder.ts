/**
 * A fixed address in front of a server that may restart on another port: a TCP forwarder whose target can
 * change, and which can cut its connections or refuse new ones (the server is gone). The client under test
 * keeps one base URL, as a client behind a load balancer does.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class Forwarder {
  private readonly sockets = new Set<Socket>();
  private target: { host: string; port: number } | undefined;

  private constructor(private readonly server: Server) {}

  static async start(targetUrl: string): Promise<Forwarder> {
    const server = createServer();
    const forwarder = new Forwarder(server);
    forwarder.pointAt(targetUrl);
    server.on('connection', (client) => forwarder.forward(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return forwarder;
  }

  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the forwarder is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Forwards new connections to this server. */
  pointAt(url: string): void {
    const { hostname, port } = new URL(url);
    this.target = { host: hostname, port: Number(port) };
  }

  /** New connections are closed at once, as if nothing listened. */
  refuse(): void {
    this.target = undefined;
  }

  /** Cuts every open connection: a drop without a goodbye. */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: Socket): void {
    this.track(client);
    if (this.target === undefined) return void client.destroy();
    const upstream = connect(this.target);
    this.track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }
}
