import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyRequestLogger } from '../../server/platform/http/request-logger.ts';
import { createTestApp } from '../helpers/app.ts';

function capture(level: pino.Level) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: pino({ level }, stream) };
}

describe('lazy request logger', () => {
  it('writes what a pino child would, with its bindings, and makes the child only for enabled levels', () => {
    const { lines, log } = capture('warn');
    let children = 0;
    const parent = Object.assign(Object.create(log) as pino.Logger, {
      child: (...args: Parameters<pino.Logger['child']>) => {
        children++;
        return log.child(...args);
      },
    });
    const reqLog = lazyRequestLogger(parent, { reqId: 'req-1' }, {});
    reqLog.info('not written');
    reqLog.debug({ a: 1 }, 'not written either');
    expect(children).toBe(0);
    expect(reqLog.level).toBe('warn');
    reqLog.warn({ why: 'test' }, 'first');
    reqLog.error('second');
    expect(children).toBe(1);
    expect(lines.map((l) => [l.level, l.reqId, l.msg, l.why])).toEqual([
      [40, 'req-1', 'first', 'test'],
      [50, 'req-1', 'second', undefined],
    ]);
    const nested = reqLog.child({ part: 'inner' });
    nested.warn('third');
    expect(lines.at(-1)).toMatchObject({ reqId: 'req-1', part: 'inner', msg: 'third' });
  });

  it('gives Fastify request logs their request id', async () => {
    const { lines, log } = capture('info');
    const app = Fastify({
      loggerInstance: log,
      childLoggerFactory: lazyRequestLogger,
      genReqId: () => 'abc',
    });
    app.get('/', async (req) => {
      req.log.warn('inside the handler');
      return { ok: true };
    });
    const res = await app.inject({ url: '/' });
    expect(res.json()).toEqual({ ok: true });
    await app.close();
    expect(lines.filter((l) => l.reqId === 'abc').map((l) => l.msg)).toEqual([
      'incoming request',
      'inside the handler',
      'request completed',
    ]);
  });
});

describe('the API request log', () => {
  it('writes no credentials from URLs: ?token=slw_... is refused and logged as ***', async () => {
    const { lines, log } = capture('info');
    const t = await createTestApp({ log });
    try {
      const u = await t.user();
      const refused = await t.call(null, 'GET', `/v1/user?token=${u.token}`);
      expect(refused.status).toBe(401);
      const ok = await t.call(u, 'GET', `/v1/user?access_token=${u.token}`);
      expect(ok.status).toBe(200);
      const text = lines.map((l) => JSON.stringify(l)).join('\n');
      expect(text).not.toContain(u.token);
      expect(text).not.toContain(u.token.slice(4));
      const urls = lines
        .filter((l) => l.msg === 'incoming request')
        .map((l) => (l.req as { url: string }).url);
      expect(urls).toEqual(['/v1/user?token=***', '/v1/user?access_token=***']);
    } finally {
      await t.close();
    }
  });
});
