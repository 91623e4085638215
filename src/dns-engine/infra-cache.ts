/**
 * The infrastructure cache: what iteration learns about the DNS tree and
 * every request can reuse, through the project's one cache (src/cache/types.ts:
 * in process, or Redis shared by every instance when REDIS_URL is set), each
 * entry for its records' TTL. Keys, under one prefix of their own:
 *
 *   dns-engine:ns:<zone>                     a zone cut: its NS names and the glue addresses
 *                                            that came with them (TTL: the NS RRset's and the
 *                                            glue's, the smallest)
 *   dns-engine:addr:<name>                   a name server's addresses, looked up (A, else AAAA)
 *   dns-engine:answer:<zone>|<qname>|<type>  a zone's whole response to a DS or DNSKEY question,
 *                                            for the validator (TTL: the smallest of its records';
 *                                            a negative answer's from its SOA, RFC 2308 §5)
 *
 * Names in keys are lower case without the trailing dot, the root ".". A
 * response is kept as its wire bytes (base64) and decoded again when read, so
 * the validator gets dns-packet's own records (Buffers and all) with TTLs
 * counted down by the entry's age, and the cache holds plain JSON.
 *
 * TTLs are capped as unbound caps them (cache-max-ttl 86400 s,
 * cache-max-negative-ttl 3600 s), so a zone that sets a week does not pin a
 * stale delegation for a week.
 */
import type * as packet from 'dns-packet';
import type { Cache, Clock } from '../cache/types.js';
import { type DecodedMessage, decodeMessage } from '../providers/dns/wire.js';
import { canonicalName } from './names.js';

const PREFIX = 'dns-engine:';
export const MAX_TTL_SECONDS = 86_400;
export const MAX_NEGATIVE_TTL_SECONDS = 3_600;

export interface CachedNameServer {
  name: string;
  addresses: string[];
}

export interface CachedResponse {
  /** The server that sent it. */
  server: string;
  message: DecodedMessage;
}

interface StoredResponse {
  server: string;
  wire: string;
  /** When it was stored (the clock's epoch milliseconds). */
  storedAt: number;
}

export class InfraCache {
  readonly #cache: Cache;
  readonly #clock: Clock;

  constructor(cache: Cache, clock: Clock = Date.now) {
    this.#cache = cache;
    this.#clock = clock;
  }

  async getCut(zone: string): Promise<CachedNameServer[] | undefined> {
    const entry = await this.#cache.get<{ nameservers: CachedNameServer[] }>(cutKey(zone));
    return entry?.value.nameservers;
  }

  putCut(zone: string, nameservers: readonly CachedNameServer[], ttl: number): Promise<void> {
    return this.#cache.set(cutKey(zone), { nameservers }, capTtl(ttl, MAX_TTL_SECONDS));
  }

  async getAddresses(name: string): Promise<string[] | undefined> {
    const entry = await this.#cache.get<{ addresses: string[] }>(`${PREFIX}addr:${canonicalName(name)}`);
    return entry?.value.addresses;
  }

  putAddresses(name: string, addresses: readonly string[], ttl: number): Promise<void> {
    if (addresses.length === 0) return Promise.resolve();
    return this.#cache.set(
      `${PREFIX}addr:${canonicalName(name)}`,
      { addresses },
      capTtl(ttl, MAX_TTL_SECONDS),
    );
  }

  /** A zone's cached response, its records' TTLs counted down by the time it has been kept. */
  async getResponse(zone: string, qname: string, qtype: string): Promise<CachedResponse | undefined> {
    const entry = await this.#cache.get<StoredResponse>(responseKey(zone, qname, qtype));
    if (!entry) return undefined;
    const message = decodeMessage(Buffer.from(entry.value.wire, 'base64'));
    const aged = Math.max(0, Math.floor((this.#clock() - entry.value.storedAt) / 1000));
    for (const rr of [...message.answers, ...message.authorities, ...message.additionals]) {
      const withTtl = rr as { ttl?: number };
      if (withTtl.ttl !== undefined) withTtl.ttl = Math.max(0, withTtl.ttl - aged);
    }
    return { server: entry.value.server, message };
  }

  /** Keeps a zone's response for the TTL its records allow (`negative`: from the SOA, RFC 2308 §5). */
  putResponse(
    zone: string,
    qname: string,
    qtype: string,
    response: { server: string; wire: Buffer; message: DecodedMessage; negative: boolean },
  ): Promise<void> {
    const ttl = response.negative ? negativeTtl(response.message) : minTtl(response.message);
    if (ttl === undefined) return Promise.resolve();
    const cap = response.negative ? MAX_NEGATIVE_TTL_SECONDS : MAX_TTL_SECONDS;
    const value: StoredResponse = {
      server: response.server,
      wire: response.wire.toString('base64'),
      storedAt: this.#clock(),
    };
    return this.#cache.set(responseKey(zone, qname, qtype), value, capTtl(ttl, cap));
  }
}

function cutKey(zone: string): string {
  return `${PREFIX}ns:${canonicalName(zone)}`;
}

function responseKey(zone: string, qname: string, qtype: string): string {
  return `${PREFIX}answer:${canonicalName(zone)}|${canonicalName(qname)}|${qtype.toUpperCase()}`;
}

function capTtl(ttl: number, cap: number): number {
  return Math.max(0, Math.min(cap, Math.floor(ttl)));
}

function ttlOf(rr: packet.Answer): number | undefined {
  const ttl = (rr as { ttl?: number }).ttl;
  return typeof ttl === 'number' ? ttl : undefined;
}

/** The smallest TTL among the answer and authority records; undefined when there are none. */
function minTtl(message: DecodedMessage): number | undefined {
  const ttls = [...message.answers, ...message.authorities]
    .map(ttlOf)
    .filter((t): t is number => t !== undefined);
  return ttls.length === 0 ? undefined : Math.min(...ttls);
}

/** RFC 2308 §5: a negative answer lives the SOA's TTL or its MINIMUM field, whichever is less. */
function negativeTtl(message: DecodedMessage): number | undefined {
  const soa = message.authorities.find((rr) => rr.type === 'SOA') as packet.SoaAnswer | undefined;
  if (!soa) return undefined;
  return Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0);
}
