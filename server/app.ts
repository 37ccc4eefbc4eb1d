import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ApiError } from '../api/errors.ts';
import { sendError } from './platform/http/errors.ts';
import { API_VERSION } from './platform/http/openapi.ts';
import { lazyRequestLogger, requestSerializer } from './platform/http/request-logger.ts';
import { registerDashboard } from './dashboard/routes.ts';
import { registerRoutes } from './platform/http/route.ts';
import { redactUrl } from './core/redact-url.ts';
import { allRoutes } from './routes/index.ts';
import { registerMetricsRoute } from './platform/ops-metrics/metrics-http.ts';
import type { Deps } from './platform/deps/deps.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The HTTP API: no listen here, so tests drive it with inject() or listen themselves. */
export function buildApp(deps: Deps): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log.child(
      { role: 'api' },
      { serializers: { req: requestSerializer } },
    ) as unknown as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    childLoggerFactory: lazyRequestLogger,
  });

  // An empty body with a JSON content type is "no body", as curl and many clients send it.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(
        new ApiError('VALIDATION_ERROR', `Request body is not valid JSON: ${(err as Error).message}`),
        undefined,
      );
    }
  });

  // File uploads: the route reads (and hashes, and limits) the stream itself.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));

  app.addHook('onRequest', async (req, reply) => {
    void reply.header('X-Request-Id', req.id);
    void reply.header('X-API-Version', API_VERSION);
  });

  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  app.setNotFoundHandler((req, reply) =>
    // Redacted: a deploy hook's URL called with the wrong method carries its secret.
    sendError(
      req,
      reply,
      new ApiError('NOT_FOUND', `No route for ${req.method} ${redactUrl(req.url.split('?')[0]!)}`),
    ),
  );

  registerRoutes(app, deps, allRoutes());
  // The operator's Prometheus metrics: only with the operator's token (never an API token).
  if (deps.config.metrics.token) registerMetricsRoute(app, deps.ops, deps.config.metrics.token);
  registerDashboard(app, deps);
  return app;
}
