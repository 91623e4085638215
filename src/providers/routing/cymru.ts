/**
 * Team Cymru's IP-to-ASN mapping over DNS, the routing fallback
 * (https://www.team-cymru.com/ip-asn-mapping). Asked through the service's
 * own DNS client, like every other DNS question (docs/architecture.md §2): no extra
 * upstream URL, no API key.
 *
 *   4.3.2.1.origin.asn.cymru.com        TXT "13335 | 1.2.3.0/24 | AU | apnic | 2011-08-11"
 *   <32 reversed nibbles>.origin6.asn.cymru.com  (IPv6, same format)
 *   AS13335.asn.cymru.com               TXT "13335 | US | arin | 2010-07-14 | CLOUDFLARENET, US"
 *
 * A multi-origin prefix lists its ASNs space-separated in the first field;
 * an address inside several announced prefixes gets one TXT record per
 * prefix, and the most specific one is the route packets follow. NXDOMAIN
 * (or no TXT) means not announced: a valid answer. A failed DNS lookup is an
 * operational failure of this provider.
 */
import ipaddr from 'ipaddr.js';
import { AppError, ProviderError } from '../../errors.js';
import type { DnsAnswer } from '../dns/types.js';
import type { ProviderInfo } from '../types.js';
import { asNumber } from './ripestat.js';
import type { AddressOrigin, OriginAs, OriginProvider } from './types.js';

/** The part of the DNS client this adapter needs; DnsResolver satisfies it. */
export interface TxtResolver {
  resolve(name: string, type: 'TXT', opts?: { signal?: AbortSignal }): Promise<{ value: DnsAnswer }>;
}

/** A multi-origin prefix rarely has more than two; the cap bounds the holder lookups. */
const MAX_ORIGINS = 4;

export class CymruRouting implements OriginProvider {
  readonly info: ProviderInfo;
  readonly #dns: TxtResolver;

  constructor(info: ProviderInfo, dns: TxtResolver) {
    this.info = info;
    this.#dns = dns;
  }

  async origin(ip: string, signal: AbortSignal): Promise<AddressOrigin> {
    const answer = await this.#txt(cymruOriginName(ip), signal);
    const route = mostSpecific(txtStrings(answer).flatMap((text) => parseOriginTxt(text) ?? []));
    if (!route) return { announced: false, prefix: null, origins: [] };
    const asns = route.asns.slice(0, MAX_ORIGINS);
    const holders = await Promise.all(asns.map((asn) => this.#holder(asn, signal)));
    const origins: OriginAs[] = asns.map((asn, i) => ({ asn, holder: holders[i] ?? null }));
    return { announced: true, prefix: route.prefix, origins };
  }

  async #holder(asn: number, signal: AbortSignal): Promise<string | null> {
    const answer = await this.#txt(`AS${asn}.asn.cymru.com`, signal);
    for (const text of txtStrings(answer)) {
      const parsed = parseAsTxt(text);
      if (parsed?.asn === asn) return parsed.holder;
    }
    return null;
  }

  async #txt(name: string, signal: AbortSignal): Promise<DnsAnswer> {
    try {
      return (await this.#dns.resolve(name, 'TXT', { signal })).value;
    } catch (err) {
      // The resolver's own 502 (every DNS provider failed) is this provider's operational failure;
      // the chain must record it and move on, not end the request.
      if (err instanceof AppError) {
        throw new ProviderError('upstream_error', `DNS lookup of ${name} failed: ${err.message}`, {
          cause: err,
        });
      }
      throw err;
    }
  }
}

/** `4.3.2.1.origin.asn.cymru.com` / `<nibbles>.origin6.asn.cymru.com` for a canonical address. */
export function cymruOriginName(ip: string): string {
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4') {
    return `${(addr as ipaddr.IPv4).octets.slice().reverse().join('.')}.origin.asn.cymru.com`;
  }
  // The same nibble order as ip6.arpa (RFC 3596 §2.5).
  const nibbles = (addr as ipaddr.IPv6)
    .toByteArray()
    .flatMap((b) => [(b >> 4).toString(16), (b & 15).toString(16)]);
  return `${nibbles.reverse().join('.')}.origin6.asn.cymru.com`;
}

export interface CymruRoute {
  asns: number[];
  prefix: string;
  /** Prefix length, for picking the most specific route. */
  bits: number;
}

/** "13335 | 1.1.1.0/24 | AU | apnic | 2011-08-11" → {asns: [13335], prefix: '1.1.1.0/24'}; undefined if malformed. */
export function parseOriginTxt(text: string): CymruRoute | undefined {
  const fields = text.split('|').map((f) => f.trim());
  if (fields.length < 2) return undefined;
  const asns = (fields[0] ?? '')
    .split(/\s+/)
    .map(asNumber)
    .filter((n): n is number => n !== null);
  const prefix = fields[1] ?? '';
  const m = /^[0-9a-f:.]+\/(\d{1,3})$/i.exec(prefix);
  if (asns.length === 0 || !m) return undefined;
  return { asns: [...new Set(asns)], prefix: prefix.toLowerCase(), bits: Number(m[1]) };
}

/** "13335 | US | arin | 2010-07-14 | CLOUDFLARENET, US" → {asn: 13335, holder: 'CLOUDFLARENET, US'}. */
export function parseAsTxt(text: string): { asn: number; holder: string | null } | undefined {
  const fields = text.split('|').map((f) => f.trim());
  const asn = asNumber(fields[0]);
  if (asn === null || fields.length < 5) return undefined;
  // The name may itself contain "|"-free commas; everything after the fourth separator is the name.
  const holder = fields.slice(4).join(' | ').trim();
  return { asn, holder: holder === '' ? null : holder };
}

function mostSpecific(routes: CymruRoute[]): CymruRoute | undefined {
  let best: CymruRoute | undefined;
  for (const r of routes) {
    if (!best || r.bits > best.bits) best = { ...r };
    else if (r.bits === best.bits && r.prefix === best.prefix) {
      best.asns = [...new Set([...best.asns, ...r.asns])];
    }
  }
  return best;
}

function txtStrings(answer: DnsAnswer): string[] {
  const out: string[] = [];
  for (const rr of answer.answers) if (rr.type === 'TXT') out.push(rr.data.text);
  return out;
}
