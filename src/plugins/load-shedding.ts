/**
 * Load shedding (@fastify/under-pressure): when the event loop is saturated a
 * request is answered 503 with Retry-After at once, which a client and a load
 * balancer can act on, instead of queueing until it times out. Liveness and
 * readiness keep answering, and metrics have a listener of their own, so
 * operators can see what is going on.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

const ALWAYS_SERVED = new Set(['/healthz', '/readyz']);
const RETRY_AFTER_SECONDS = 5;

export interface LoadSheddingOptions {
  /** Mean event-loop delay in ms past which requests are shed; 0 disables. */
  maxEventLoopDelayMs: number;
  /** How often the delay is sampled; tests shorten it. */
  sampleIntervalMs?: number;
  onShed?: () => void;
}

async function loadSheddingPlugin(app: FastifyInstance, opts: LoadSheddingOptions): Promise<void> {
  if (opts.maxEventLoopDelayMs <= 0) return;
  await app.register(underPressure, {
    maxEventLoopDelay: opts.maxEventLoopDelayMs,
    sampleInterval: opts.sampleIntervalMs ?? 1000,
    retryAfter: RETRY_AFTER_SECONDS,
    pressureHandler: async (request: FastifyRequest) => {
      if (ALWAYS_SERVED.has(request.routeOptions.url ?? '')) return;
      opts.onShed?.();
      throw new AppError(503, 'unavailable', 'the service is overloaded; retry shortly', {
        headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      });
    },
  });
}

export default fp(loadSheddingPlugin, { name: 'load-shedding' });
