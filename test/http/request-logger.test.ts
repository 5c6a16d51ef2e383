/**
 * The request's logger made when used (src/http/plugins/request-logger.ts): nothing is made for calls at levels the
 * app's logger leaves out; a line written is the one the eager child would have written, bindings and
 * redaction included; a child with options of its own is made at once.
 */
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from '../../src/http/plugins/request-logger.js';
import { createLogger } from '../../src/logger.js';

function loggerAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk)
        .split('\n')
        .filter((l) => l !== ''))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

const withoutTime = (line: Record<string, unknown> | undefined) => ({ ...line, time: 0 });
const factory = lazyRequestLogger as unknown as (
  logger: FastifyBaseLogger,
  bindings: object,
  options: object,
) => FastifyBaseLogger;

describe("a request's logger", () => {
  it('makes no child for calls at levels the logger leaves out, and reads its level from the parent', () => {
    const { logger, lines } = loggerAt('info');
    const child = vi.spyOn(logger, 'child');
    const log = factory(logger, { reqId: 'r1' }, {});
    log.debug({ req: { url: '/x' } }, 'incoming request');
    log.trace('detail');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.level).toBe('info');
    logger.level = 'debug';
    expect(log.level).toBe('debug');
  });

  it('writes, once a call is at an enabled level, the line the eager child writes: bindings and redaction alike', async () => {
    const lazy = loggerAt('info');
    const eager = loggerAt('info');
    const fields = { err: new Error('boom'), headers: { authorization: 'Bearer secret-token' }, password: 'hunter2' };
    factory(lazy.logger, { reqId: 'r2' }, {}).error(fields, 'request errored');
    eager.logger.child({ reqId: 'r2' }).error(fields, 'request errored');
    expect(lazy.lines).toHaveLength(1);
    expect(withoutTime(lazy.lines[0])).toEqual(withoutTime(eager.lines[0]));
    expect(lazy.lines[0]).toMatchObject({
      reqId: 'r2',
      msg: 'request errored',
      headers: { authorization: '[redacted]' },
      password: '[redacted]',
    });
  });

  it('makes a child with options of its own (a route logLevel) at once, at its own level', () => {
    const { logger, lines } = loggerAt('warn');
    const log = factory(logger, { reqId: 'r3' }, { level: 'info' });
    expect(log.level).toBe('info');
    log.info('route line');
    expect(lines).toMatchObject([{ reqId: 'r3', msg: 'route line' }]);
  });

  it("gives children of its own that carry the request's bindings", () => {
    const { logger, lines } = loggerAt('info');
    factory(logger, { reqId: 'r4' }, {}).child({ component: 'x' }).warn('nested');
    expect(lines).toMatchObject([{ reqId: 'r4', component: 'x', msg: 'nested' }]);
  });
});
