import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { AUDIT_PATH_MAX_BYTES, capText } from '../../domain/access/audit.js';

/** The log levels at which an info line is written. */
const LEVELS_WITH_INFO = new Set(['trace', 'debug', 'info']);

/**
 * One access-log line per request at info, when it completes (method, URL, client address, status and
 * time), instead of Fastify's two: the line of the arrival, with the request serialized and redacted, cost
 * order entry a twentieth of its CPU. It is logged at debug.
 *
 * The line is the only trace of an order-entry request whose caller was not established (the audit trail
 * keeps authenticated callers' requests alone, docs/design/audit.md), so it names the TCP peer; and its URL
 * is capped like the trail's path (1 KiB), a cut one with `url_cut` (the whole one's length and SHA-256),
 * so that a flood of huge query strings cannot fill the log either.
 *
 * The line of a request that completed goes through a child of the app's logger with no redaction: its
 * fields are the ones above and no secret's path (src/logger.ts), but pino's wildcard paths (`*.password`)
 * ran every one of them through the redactor, 2.7 % of a SQLite node's CPU at saturation (CPU profile,
 * 2026-11-28). The line of a request that errored keeps the redacting logger: the error may carry anything.
 */
export class AccessLog extends LogController {
  private readonly unredacted = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    // The request's own logger decides whether the line is wanted (the app's level, or a route's logLevel):
    // the unredacted child below writes at any level.
    if (!error && !LEVELS_WITH_INFO.has(reply.log.level)) return;
    const url = capText(request.url, AUDIT_PATH_MAX_BYTES);
    const line = {
      method: request.method,
      url: url.text,
      ...(url.cut === null ? {} : { url_cut: url.cut }),
      remoteAddress: request.ip,
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else this.unredactedLog(request.server.log).info({ reqId: request.id, ...line }, 'request completed');
  }

  private unredactedLog(log: FastifyBaseLogger): FastifyBaseLogger {
    let plain = this.unredacted.get(log);
    if (plain === undefined) {
      plain = log.child({}, { redact: [], level: 'trace' });
      this.unredacted.set(log, plain);
    }
    return plain;
  }
}
