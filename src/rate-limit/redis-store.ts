/**
 * The fixed window (store.ts) counted in Redis, so every instance spends one budget.
 *
 * A key's window in a counter is one Redis string, `netdiag:rl:<counter>:<key>`
 * (REDIS_KEY_PREFIX), holding the points taken as an integer, its expiry the window's end
 * (PEXPIRE, so Redis's own clock closes it). A take is one command whatever the number of
 * counters: the script TAKE, run by EVALSHA (ioredis's defineCommand, which sends EVAL once
 * if Redis does not know the script yet).
 *
 * When a command fails (Redis down, a timeout) the same counters are taken in the
 * in-process store handed in as insurance, and the failure is reported: the service keeps
 * serving with per-process budgets until Redis answers again.
 */
import type { Redis, Result } from 'ioredis';
import type { MemoryStore } from './memory-store.js';
import { windowMs } from './memory-store.js';
import type { Counter, RateLimitStore, WindowState } from './store.js';

export const REDIS_KEY_PREFIX = 'netdiag:rl:';

/**
 * For each counter in order: one point added to its key (INCR), a new window's expiry set
 * (PEXPIRE), the time left read otherwise (PTTL); the loop stops after the first counter
 * that refuses, so the next counters are neither counted nor read. A key left without an
 * expiry (written by something else) starts a fresh window rather than count for ever.
 * KEYS: the counters' keys; ARGV: each counter's window (ms) then its points.
 * Returns consumed and ms to the window's end for each counter asked, flat.
 */
const TAKE = `
local out = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i - 1])
  local consumed = redis.call('INCR', key)
  local ttl = window
  if consumed == 1 then
    redis.call('PEXPIRE', key, window)
  else
    ttl = redis.call('PTTL', key)
    if ttl < 0 then
      redis.call('SET', key, 1, 'PX', window)
      consumed = 1
      ttl = window
    end
  end
  out[2 * i - 1] = consumed
  out[2 * i] = ttl
  if consumed > tonumber(ARGV[2 * i]) then break end
end
return out
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** TAKE (rate-limit/redis-store.ts), on a client a RedisStore was built with. */
    netdiagRateLimitTake(numKeys: number, ...keysThenArgs: (string | number)[]): Result<number[], Context>;
  }
}

export function redisKey(counter: Counter, key: string): string {
  return `${REDIS_KEY_PREFIX}${counter.name}:${key}`;
}

export interface RedisStoreOptions {
  /** Answers while Redis cannot. */
  insurance: MemoryStore;
  onError?: ((err: unknown) => void) | undefined;
}

export class RedisStore implements RateLimitStore {
  readonly #redis: Redis;
  readonly #insurance: MemoryStore;
  readonly #onError: (err: unknown) => void;

  constructor(redis: Redis, opts: RedisStoreOptions) {
    this.#redis = redis;
    this.#insurance = opts.insurance;
    this.#onError = opts.onError ?? (() => {});
    redis.defineCommand('netdiagRateLimitTake', { lua: TAKE });
  }

  take(counters: readonly Counter[], key: string): Promise<WindowState[]> {
    const args: (string | number)[] = counters.map((c) => redisKey(c, key));
    for (const counter of counters) args.push(windowMs(counter), counter.points);
    return this.#redis.netdiagRateLimitTake(counters.length, ...args).then(
      (out) => {
        const states: WindowState[] = [];
        for (let i = 0; i + 1 < out.length; i += 2)
          states.push({ consumed: out[i]!, msBeforeNext: out[i + 1]! });
        return states;
      },
      (err: unknown) => {
        this.#onError(err);
        return this.#insurance.take(counters, key);
      },
    );
  }

  /** One round trip (a pipeline of GET and PTTL per counter); the insurance's windows if it fails. */
  async peek(counters: readonly Counter[], key: string): Promise<(WindowState | undefined)[]> {
    const pipeline = this.#redis.pipeline();
    for (const counter of counters) pipeline.get(redisKey(counter, key)).pttl(redisKey(counter, key));
    try {
      const replies = await pipeline.exec();
      return counters.map((_, i) => {
        const consumed = numberOf(replies?.[2 * i]);
        const ttl = numberOf(replies?.[2 * i + 1]);
        return consumed > 0 && ttl > 0 ? { consumed, msBeforeNext: ttl } : undefined;
      });
    } catch (err) {
      this.#onError(err);
      return this.#insurance.peek(counters, key);
    }
  }
}

/** A pipeline reply as a number (0 for a missing key); a command's own error thrown. */
function numberOf(reply: [Error | null, unknown] | undefined): number {
  if (reply === undefined) throw new Error('rate-limit peek: a reply is missing');
  const [err, value] = reply;
  if (err !== null) throw err;
  return value === null ? 0 : Number(value);
}
