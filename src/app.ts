/**
 * buildApp(config, deps) → a Fastify instance with every plugin and route
 * registered. It never listens: server.ts does, and tests use inject() or
 * listen on port 0 themselves.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifySchema,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { type Config, challengeActive } from './config/index.js';
import { type AppContext, type AppDeps, createContext } from './context.js';
import { type FeatureName, features } from './features/index.js';
import { accessLog, createLogger, lazyChildLogger, requestIdOf } from './logger.js';
import challengeGatePlugin, { ChallengeGate } from './plugins/challenge-gate.js';
import { clientIp, trustRule } from './plugins/client-address.js';
import compression from './plugins/compression.js';
import { ConnectionGuard } from './plugins/connection-guard.js';
import errorsPlugin, {
  BODY_LIMIT,
  expectationFailed,
  refuseConnect,
  sendError,
  writeRawError,
} from './plugins/errors.js';
import httpHeaders from './plugins/http-headers.js';
import { LoadMonitor } from './plugins/load-shedding.js';
import metricsPlugin from './plugins/metrics.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import requestChecksPlugin, {
  type CheckedRequest,
  RequestPipeline,
  requestChecks,
} from './plugins/request-checks.js';
import responseCachePlugin, { ResponseCache } from './plugins/response-cache.js';
import strictJson from './plugins/strict-json.js';
import taggedUnions from './plugins/tagged-unions.js';
import { providerPlugins } from './providers/plugins.js';
import { ClientLimits, type LimitGroup } from './rate-limit/client-limits.js';

export interface RouteEntry {
  method: string;
  url: string;
  documented: boolean;
  schema: FastifySchema | undefined;
  /** Counts against the expensive rate-limit group (`config: { expensive: true }`). */
  expensive: boolean;
}

export interface BuildOptions extends AppDeps {
  /** A pino logger to use instead of one built from config (tests read log lines through it). */
  logger?: Logger;
  /** Event-loop sampling interval for load shedding (tests shorten it). */
  loadSampleIntervalMs?: number;
  /** Told of each request check as it runs, by name (tests prove that both paths run every one). */
  observeCheck?: (check: string, request: IncomingMessage) => void;
  /**
   * Only these endpoint families, and the provider families they read (a one-shot `netdiag`
   * command: one tool's route); every family when absent, as the server runs.
   */
  features?: readonly FeatureName[];
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /**
     * Every route registered, for the OpenAPI completeness check, operators' eyes and the
     * lookup tools (MCP, CLI), which take their input schema and description from here.
     */
    routeTable: RouteEntry[];
  }
}

/**
 * Two validators: query strings and params arrive as text, so they are coerced
 * ("true" → true, a repeated key → array); JSON bodies arrive typed, so they
 * are not — `{"token": 42}` is a 400, not the string "42". Neither removes
 * unknown fields silently: a body schema that forbids them answers 400.
 */
const validators = (() => {
  const make = (coerceTypes: false | 'array') => {
    const ajv = new Ajv({
      coerceTypes,
      useDefaults: true,
      removeAdditional: false,
      allErrors: false,
      strict: false,
    });
    // ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
    formats.default(ajv);
    return ajv;
  };
  const text = make('array');
  const json = make(false);
  return {
    compile: (schema: object, httpPart: string | undefined) =>
      (httpPart === 'body' ? json : text).compile(schema),
  };
})();

const CONNECTION_IDLE_MS = 120_000;
/** Fastify's default: how long an idle keep-alive connection stays open between requests. */
const KEEP_ALIVE_MS = 72_000;

const MALFORMED: [string, string] = ['400 Bad Request', 'malformed HTTP request'];
/** Node's clientError codes that are not the generic parse failure. */
const CLIENT_ERRORS: Record<string, [string, string]> = {
  HPE_HEADER_OVERFLOW: ['431 Request Header Fields Too Large', 'request headers (or URL) too large'],
  // Headers or body not received within REQUEST_TIMEOUT_MS.
  ERR_HTTP_REQUEST_TIMEOUT: ['408 Request Timeout', 'the request was not received in time'],
};

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const logger = opts.logger ?? createLogger(config);
  const ctx = createContext(config, logger, opts);
  // One rule for every reader of the client address, Fastify's request.ip included.
  const trust = config.trustProxy === false ? undefined : trustRule(config.trustProxy);
  const access = accessLog(logger as FastifyBaseLogger);
  // What every request is checked against, built before the server so both paths get it whole.
  const connections = new ConnectionGuard({
    maxPerAddress: config.maxConnectionsPerIp,
    trusted: (address) => trust?.(address, 0) === true,
    onRefused: () => ctx.metrics.connectionsRefused.inc(),
  });
  const load = new LoadMonitor(config.loadShedEventLoopDelayMs, opts.loadSampleIntervalMs);
  const limits = new ClientLimits({
    general: config.rateLimitGeneral,
    expensive: config.rateLimitExpensive,
    store: ctx.rateLimitStore,
  });
  const gate = new ChallengeGate({
    active: challengeActive(config),
    sessionSecret: config.sessionSecret,
    clock: ctx.clock,
    exemptCidrs: config.challengeExemptCidrs,
  });
  const onRateLimited = (group: LimitGroup) => ctx.metrics.rateLimited.inc({ group });
  const checks = requestChecks({
    connections,
    load,
    limits,
    gate,
    onShed: () => ctx.metrics.shed.inc(),
    onRateLimited,
  });
  const { observeCheck } = opts;
  const pipeline = new RequestPipeline(
    observeCheck === undefined
      ? checks
      : checks.map((check) => ({
          name: check.name,
          run: (request: CheckedRequest) => {
            observeCheck(check.name, request.raw);
            return check.run(request);
          },
        })),
  );
  const replays = new ResponseCache({
    clock: ctx.clock,
    trust,
    pipeline,
    access,
    recordRequest: (route, method, status, seconds) =>
      ctx.metrics.recordRequest(route, method, status, seconds),
    onHit: ctx.cacheEvents.onHit,
  });
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: trust ?? false,
    // The server Fastify would create (lib/server.js, its HTTP/1 branch), with a listener that
    // answers replays of cached answers before routing (plugins/response-cache.ts, after the
    // same request checks as Fastify's hook) and hands Fastify everything else.
    serverFactory: (handler) => {
      const server = createServer(
        {
          headersTimeout: config.requestTimeoutMs,
          // Node checks the two timeouts this often (default 30 s, which would double a 30 s budget).
          connectionsCheckingInterval: Math.min(1_000, config.requestTimeoutMs),
          // Node answers a missing Host with an empty 400 of its own; the host-header check answers JSON.
          requireHostHeader: false,
        },
        replays.listener(handler),
      );
      connections.watch(server);
      // A client has REQUEST_TIMEOUT_MS to send its whole request, headers and body: a body
      // announced and never sent, or trickled, must not hold a socket (JSON 408, clientError below).
      server.requestTimeout = config.requestTimeoutMs;
      // An idle socket mid-response (a client that stopped reading) is dropped; longer than the
      // slowest endpoint's own deadlines (certificates: two crt.sh searches of 35 s).
      server.setTimeout(CONNECTION_IDLE_MS);
      server.keepAliveTimeout = KEEP_ALIVE_MS;
      // Node answers an Expect other than 100-continue with an empty 417, and a CONNECT with a
      // closed connection; both are answered in JSON instead (plugins/errors.ts).
      server.on('checkExpectation', expectationFailed);
      server.on('connect', refuseConnect);
      return server;
    },
    bodyLimit: BODY_LIMIT,
    // Long enough for any legitimate query; past it the client gets a JSON 400, not a hang.
    routerOptions: { maxParamLength: 500 },
    // One line per request (in onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    genReqId: requestIdOf,
    // Malformed URLs (bad percent-encoding in the path) are answered by the router before any hook runs.
    frameworkErrors: (err, _req, reply) =>
      sendError(reply, 400, {
        error: err.code === 'FST_ERR_BAD_URL' ? 'the URL is malformed' : err.message,
        code: 'bad_request',
      }),
    // Timeouts, oversized headers or garbage on the socket: answer JSON on the raw socket, never a hang.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return socket.destroy();
      const [status, error] = CLIENT_ERRORS[(err as { code?: string }).code ?? ''] ?? MALFORMED;
      writeRawError(socket, status, error);
    },
  });

  const routeTable: FastifyInstance['routeTable'] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routeTable.push({
        method,
        url: route.url,
        documented: route.schema?.hide !== true,
        schema: route.schema,
        expensive: route.config?.expensive === true,
      });
    }
  });

  app.setValidatorCompiler(({ schema, httpPart }) => validators.compile(schema, httpPart));

  // Every body this API accepts is JSON; anything else is a 400, not a string handed to a schema.
  app.removeContentTypeParser('text/plain');

  // Callback-style hooks where nothing is awaited: an async hook costs a promise and a microtask per request.
  app.addHook('onResponse', (request, reply, done) => {
    access(request.id, request.method, request.url, reply.statusCode, reply.elapsedTime, clientIp(request));
    done();
  });

  app.decorate('ctx', ctx);
  app.addHook('onClose', async () => {
    load.close();
    await ctx.close();
  });

  await app.register(errorsPlugin, { onInternalError: () => ctx.metrics.internalErrors.inc() });
  // The one onRequest hook: the request checks, in their order (plugins/request-checks.ts).
  await app.register(requestChecksPlugin, { pipeline });
  await app.register(strictJson);
  await app.register(httpHeaders);
  // Before every static-file plugin (the site, /docs), as @fastify/compress requires.
  await app.register(compression);
  await app.register(metricsPlugin, { metrics: ctx.metrics });
  await app.register(rateLimitPlugin, { limits, onReject: onRateLimited });
  await app.register(challengeGatePlugin, { gate });
  // Last of the plugins that set headers in onSend: it keeps what they produced.
  await app.register(responseCachePlugin, { cache: replays });
  // /openapi.json and /docs describe the whole API: an app built for some families serves neither.
  if (opts.features === undefined) await app.register((await import('./plugins/openapi.js')).default);
  await app.register(taggedUnions);

  // The provider families first (each decorates the instance and owns its lifecycle), then the routes that read them.
  const only = opts.features;
  const chosen = only === undefined ? features : features.filter((f) => only.includes(f.name));
  const families = new Set(chosen.flatMap((f) => f.providers));
  for (const { family, plugin } of providerPlugins) {
    if (families.has(family)) await app.register(plugin, { ctx });
  }
  for (const feature of chosen) await app.register((await feature.load()).default, { ctx });

  return app;
}
