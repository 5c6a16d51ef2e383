import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { AUDIT_PATH_MAX_BYTES, capText } from '../domain/audit.js';

/**
 * One access-log line per request at info, when it completes (method, URL, client address, status and
 * time), instead of Fastify's two: the line of the arrival, with the request serialized and redacted, cost
 * order entry a twentieth of its CPU. It is logged at debug.
 *
 * The line is the only trace of an order-entry request whose caller was not established (the audit trail
 * keeps authenticated callers' requests alone, docs/design/audit.md), so it names the TCP peer; and its URL
 * is capped like the trail's path (1 KiB), a cut one with `url_cut` (the whole one's length and SHA-256),
 * so that a flood of huge query strings cannot fill the log either.
 */
export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const url = capText(request.url, AUDIT_PATH_MAX_BYTES);
    const line = {
      method: request.method,
      url: url.text,
      ...(url.cut === null ? {} : { url_cut: url.cut }),
      remoteAddress: request.ip,
      res: reply,
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
