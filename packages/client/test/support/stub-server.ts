/** A tiny local HTTP server whose answers a test scripts one request at a time. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

export interface StubServer {
  url: string;
  /** The requests received so far: method, URL and headers. */
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** Answers the n-th request with handlers[n] (the last handler answers any further ones). */
export async function stubServer(handlers: Handler[]): Promise<StubServer> {
  const requests: StubServer['requests'] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      handlers[Math.min(requests.length, handlers.length) - 1]!(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const envelope = (code: string, message = 'refused', requestId = 'req-1') =>
  JSON.stringify({ status: 'error', code, message, errors: [{ field: 'x', message: 'bad x' }], request_id: requestId });

export function json(status: number, body: string, headers: Record<string, string> = {}): Handler {
  return (_request, response) =>
    void response
      .writeHead(status, { 'content-type': 'application/json', 'request-id': 'req-1', ...headers })
      .end(body);
}

/** Closes the connection without an answer: a network error for the client. */
export const drop: Handler = (request) => request.socket.destroy();
