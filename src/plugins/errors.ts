/**
 * The error handler: every non-2xx leaves as JSON `{error, code?, providers_tried?}`
 * with `Cache-Control: no-store`. Fastify's own errors (bad JSON, wrong content
 * type, oversized body) become 400s naming what was wrong; schema failures name
 * the parameter and the rule; anything unexpected is a logged 500 that leaks
 * nothing but the request id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import Router, { type HTTPMethod } from 'find-my-way';
import { AppError, type ErrorBody, type ErrorCode } from '../errors.js';

export const BODY_LIMIT = 16 * 1024;

const HTTP_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Turns an AJV issue into "type must be one of A, AAAA, …" style text naming the parameter. */
export function describeValidation(issue: ValidationIssue, context: string | undefined): string {
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const where = context === 'body' ? 'body' : 'query';
  const param = path || where;
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return `${String(p.missingProperty)} is required`;
    case 'enum':
      return `${param} must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `${param} must be ${String(p.allowedValue)}`;
    case 'additionalProperties':
      return `${String(p.additionalProperty)} is not an accepted ${context === 'body' ? 'field' : 'parameter'}`;
    case 'type':
      return `${param} must be ${context === 'body' && !path ? 'a JSON object' : `of type ${String(p.type)}`}`;
    case 'minLength':
      return p.limit === 1
        ? `${param} must not be empty`
        : `${param} must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `${param} must be at most ${String(p.limit)} characters`;
    case 'minimum':
    case 'maximum':
      return `${param} ${issue.message ?? 'is out of range'}`;
    default:
      return `${param} ${issue.message ?? 'is invalid'}`;
  }
}

/** Fastify framework errors that are the client's fault, and the message each gets. */
function clientFault(err: FastifyError): string | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Content-Type must be application/json';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `body must be at most ${BODY_LIMIT} bytes`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'body must not be empty when Content-Type is application/json';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Content-Length does not match the body';
    case 'FST_ERR_BAD_URL':
      return 'the URL is malformed';
    default:
      break;
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return 'body is not valid JSON';
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return err.message;
  return undefined;
}

/**
 * An error answered on the raw socket, for the moments no request object exists
 * (a request that was never received whole, could not be parsed, or asked for a tunnel):
 * still JSON `{error, code?}`, still no-store, and the connection closed.
 */
export function writeRawError(
  socket: Duplex,
  status: string,
  error: string,
  extra: { code?: ErrorCode; headers?: Readonly<Record<string, string>> } = {},
): void {
  const body = JSON.stringify(extra.code === undefined ? { error } : { error, code: extra.code });
  const headers = Object.entries(extra.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The server's 'checkExpectation' listener: an `Expect` other than `100-continue`, which Node
 * would answer with an empty 417 (RFC 9110 §10.1.1). The request never reaches Fastify; the
 * connection is closed, since the body the client may send regardless is never read.
 */
export function expectationFailed(request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({
    error: `Expect: ${String(request.headers.expect).slice(0, 100)} cannot be met; only 100-continue is supported`,
    code: 'expectation_failed' satisfies ErrorCode,
  });
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

/** The methods this service serves resources by: what a refused CONNECT is told to use. */
const SERVED_METHODS = 'GET, HEAD, POST';

/**
 * The server's 'connect' listener: a CONNECT asks for a tunnel, and this service is no proxy.
 * Node would close the connection without a word; it gets a JSON 405 with `Allow`, then the
 * close (whatever follows the request on the socket would be tunnel data).
 */
export function refuseConnect(_request: IncomingMessage, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  writeRawError(socket, '405 Method Not Allowed', 'CONNECT is not allowed: this service is not a proxy', {
    code: 'method_not_allowed',
    headers: { Allow: SERVED_METHODS },
  });
}

export function sendError(
  reply: FastifyReply,
  status: number,
  body: ErrorBody,
  headers: Record<string, string> = {},
) {
  reply
    .code(status)
    .headers({ ...headers, 'cache-control': 'no-store' })
    .type('application/json; charset=utf-8');
  return reply.send(body);
}

export interface ErrorsOptions {
  /** Told of every bug answered 500, to count it. */
  onInternalError?: () => void;
}

async function errorsPlugin(app: FastifyInstance, opts: ErrorsOptions): Promise<void> {
  app.setErrorHandler((err: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      // A 502 or 503 is a state of the world (upstreams down, lists not loaded, load shed), logged
      // once where it arises and counted; only an unexpected server error is worth a line per request.
      if (err.statusCode >= 500 && err.statusCode !== 502 && err.statusCode !== 503) {
        request.log.error({ err }, 'request failed');
        if (err.statusCode === 500) opts.onInternalError?.();
      }
      return sendError(reply, err.statusCode, err.toBody(), { ...err.headers });
    }
    const fe = err as FastifyError;
    if (fe.validation && fe.validation.length > 0) {
      const first = fe.validation[0] as unknown as ValidationIssue;
      return sendError(reply, 400, {
        error: describeValidation(first, fe.validationContext),
        code: 'bad_request',
      });
    }
    const fault = clientFault(fe);
    if (fault !== undefined) {
      return sendError(reply, 400, { error: fault, code: 'bad_request' });
    }
    request.log.error({ err }, 'unhandled error');
    opts.onInternalError?.();
    return sendError(reply, 500, { error: 'internal error', code: 'internal' });
  });

  // The routes by method, matched the way Fastify's router matches them, to tell a path that
  // exists under other methods (405 with Allow, RFC 9110 §15.5.6) from one that does not (404).
  const routes = Router();
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map((m) => m.toUpperCase() as HTTPMethod);
    routes.on(methods, route.url, () => {});
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = HTTP_METHODS.filter((method) => routes.find(method, path) !== null);
    // A route that does serve this method and found nothing (an unknown /assets/ file) is a 404.
    if (allowed.length > 0 && !allowed.includes(request.method as HTTPMethod)) {
      return sendError(
        reply,
        405,
        {
          error: `${request.method} is not allowed on ${path.slice(0, 200)}; use ${allowed.join(', ')}`,
          code: 'method_not_allowed',
        },
        { allow: allowed.join(', ') },
      );
    }
    return sendError(reply, 404, {
      error: `no route for ${request.method} ${path.slice(0, 200)}`,
      code: 'not_found',
    });
  });
}

export default fp(errorsPlugin, { name: 'errors' });
