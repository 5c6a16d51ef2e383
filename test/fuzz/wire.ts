/**
 * Sends a request exactly as built (node:http keeps the path, the header forms and the method as given;
 * fetch would normalize them) and reads the answer. An event stream is not read: its status and headers
 * are the answer.
 */
import http from 'node:http';
import type { WireRequest } from './requests.js';

export interface WireAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** An event stream, closed once its headers arrived. */
  streamed: boolean;
}

const ANSWER_TIMEOUT_MS = 10_000;

/** Header values go out as Latin-1 without control characters (Node refuses others): the rest become "?". */
export function latin1(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

export function send(base: URL, request: WireRequest, agent: http.Agent): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers))
      headers[name] = Array.isArray(value) ? value.map(latin1) : latin1(value);
    if (request.body !== undefined && !request.chunked) headers['content-length'] = Buffer.byteLength(request.body);
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.target,
        headers,
        agent,
        setHost: !('host' in headers),
      },
      (res) => {
        answered = true;
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', streamed: true });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            streamed: false,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    // The server may answer (413, 431) and close before the whole body is written: the answer stands.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (request.body !== undefined && request.chunked) {
      // Two chunks, split at the middle byte (maybe inside a UTF-8 sequence).
      const bytes = Buffer.from(request.body, 'utf8');
      req.write(bytes.subarray(0, bytes.length >> 1));
      req.end(bytes.subarray(bytes.length >> 1));
    } else req.end(request.body);
  });
}
