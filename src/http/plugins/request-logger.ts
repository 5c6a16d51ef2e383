/**
 * Each request's logger (request.log, reply.log), made only when something is logged through it. Fastify
 * makes a pino child per request, binding its id; pino serializes the bindings of a child when it is made
 * (through the redactor: the app's logger redacts secrets at wildcard paths), which took 1.3 % of a SQLite
 * node's CPU at saturation (docs/design/performance-log.md, "The request's logger made when used"). A request
 * that succeeds logs nothing through its own logger (its access line goes through the app's, with the id:
 * access-log.ts), so most requests never need the child. This stands in for it: a call at an enabled level
 * makes the real child (same bindings, same options) and forwards to it, so a line written is the line
 * the eager child would have written; calls at disabled levels cost a level check.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, FastifyChildLoggerFactory } from 'fastify/types/logger.js';

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The parent's level check, when it has one (pino's); otherwise every level counts as enabled. */
function enabled(parent: FastifyBaseLogger, method: Method): boolean {
  const check = (parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined ? true : check.call(parent, method);
}

class RequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The real child, made at the first use that needs it. */
  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private log(method: Method, args: unknown[]): void {
    if (this.made === undefined && !enabled(this.parent, method)) return;
    (this.real()[method] as (...a: unknown[]) => void)(...args);
  }
}

/**
 * Fastify's childLoggerFactory: a request logger made when used. A child with options of its own (a route's
 * logLevel, serializers) is made at once, as Fastify would, since its level is not the parent's.
 */
export const lazyRequestLogger: FastifyChildLoggerFactory = function (logger, bindings, options) {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
};
