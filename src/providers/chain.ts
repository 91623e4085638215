/**
 * The one provider chain (docs/architecture.md §1): cache first, then the primary, a
 * fallback only after an operational failure of the one before. Each attempt
 * ends one of three ways:
 *
 *  - an answer: a value, possibly a valid negative one (NXDOMAIN, an RDAP 404),
 *    which stops the chain;
 *  - no data (the call returns NO_DATA): the provider answered and holds
 *    nothing for this question; the next one is asked, and it is not a failure;
 *  - an operational failure (a ProviderError): recorded against the provider;
 *    the next one is asked.
 *
 * Anything else thrown is a bug, not an upstream's doing: it is neither
 * recorded as a provider failure nor shown in providers_tried; it propagates
 * to the error handler, which logs it and answers 500 `internal error`.
 * Unconfigured providers (a fallback lacking its key) are skipped and not
 * listed as tried. When no provider answers, the caller gets a 502 AppError
 * carrying providers_tried (404 when every one had no data), and nothing is cached.
 */
import { type CachedLoader, type Freshness, freshness } from '../cache/cached.js';
import { AppError, noProviderData, type ProviderAttempt, ProviderError, upstreamFailed } from '../errors.js';
import type { ProviderRegistry } from './registry.js';
import { type Attribution, NO_DATA, type NoData, type Provider } from './types.js';

export interface ChainRequest<P extends Provider, T> {
  /** Names the capability in errors and metrics ("dns", "ct", ...). */
  capability: string;
  providers: readonly P[];
  call: (provider: P, signal: AbortSignal) => Promise<T | NoData>;
  /** Cache key (endpoint + normalized input); omit to bypass the cache. */
  key?: string;
  /** Seconds an answer may be reused, given who answered and who was tried first; 0 = not stored. */
  ttl: (value: T, answered: Attribution) => number;
  signal?: AbortSignal;
  /**
   * Per-attempt timeout for this request instead of the chain's default
   * (PROVIDER_TIMEOUT_MS): a multi-step call such as a global DNS measurement
   * (create, then poll for ~20 s) needs longer than one HTTP round trip.
   */
  timeoutMs?: number;
}

export interface ChainResult<T> extends Attribution {
  value: T;
  cache: Freshness;
}

export interface ProviderChainOptions {
  loader: CachedLoader;
  registry: ProviderRegistry;
  timeoutMs: number;
}

type Answer<T> = Attribution & { value: T };

export class ProviderChain {
  readonly #opts: ProviderChainOptions;

  constructor(opts: ProviderChainOptions) {
    this.#opts = opts;
  }

  async run<P extends Provider, T>(req: ChainRequest<P, T>): Promise<ChainResult<T>> {
    if (req.key === undefined) {
      const answer = await this.#attempt(req);
      return { ...answer, cache: { hit: false, maxAge: 0, expiresAt: 0 } };
    }
    const result = await this.#opts.loader.load<Answer<T>>(`${req.capability}:${req.key}`, async () => {
      const answer = await this.#attempt(req);
      return { value: answer, ttl: req.ttl(answer.value, answer) };
    });
    const { value, source, source_id, providers_tried } = result.value;
    return { value, source, source_id, providers_tried, cache: freshness(result) };
  }

  async #attempt<P extends Provider, T>(req: ChainRequest<P, T>): Promise<Answer<T>> {
    const tried: ProviderAttempt[] = [];
    for (const provider of req.providers) {
      const { id, name, configured } = provider.info;
      if (!configured) continue;
      let value: T | NoData;
      try {
        value = await this.#callWithTimeout(req, provider);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        tried.push({ id, name, status: 'failed', error: this.#opts.registry.recordFailure(id, err) });
        if (req.signal?.aborted) break;
        continue;
      }
      if (value === NO_DATA) {
        this.#opts.registry.recordSuccess(id, 'no_data');
        tried.push({ id, name, status: 'no_data' });
        continue;
      }
      tried.push({ id, name, status: 'ok' });
      this.#opts.registry.recordSuccess(id);
      return { value, source: name, source_id: id, providers_tried: tried };
    }
    if (tried.length > 0 && tried.every((t) => t.status === 'no_data')) {
      throw noProviderData(req.capability, tried);
    }
    throw upstreamFailed(req.capability, tried);
  }

  async #callWithTimeout<P extends Provider, T>(req: ChainRequest<P, T>, provider: P): Promise<T | NoData> {
    const timeoutMs = req.timeoutMs ?? this.#opts.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const timedOut = () => new ProviderError('timeout', `no answer within ${timeoutMs} ms`);
    let onAbort: (() => void) | undefined;
    // Races the call so an adapter that ignores its signal still cannot hold the chain past the timeout.
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(timeout.aborted ? timedOut() : new ProviderError('network', 'request aborted by the client'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([req.call(provider, signal), aborted]);
    } catch (err) {
      if (err instanceof AppError) throw err;
      // Whatever an adapter throws once its signal has fired (undici's AbortError, a
      // half-read body) is the abort itself, not a bug of its own.
      if (timeout.aborted && !(err instanceof ProviderError && err.kind !== 'network')) {
        throw new ProviderError('timeout', timedOut().message, { cause: err });
      }
      if (signal.aborted && !(err instanceof ProviderError)) {
        throw new ProviderError('network', 'request aborted by the client', { cause: err });
      }
      throw err;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
