/**
 * GET /api/ip-geo, /api/ip-privacy and /api/my-ip: normalize the address,
 * consult the offline data (and for ip-geo the chain's fallback), shape the
 * answer. Providers come in as arguments so tests hand in fakes.
 */

import type { Clock } from '../../cache/types.js';
import { AppError } from '../../errors.js';
import { reverseName } from '../../net/names.js';
import type { ChainResult, ProviderChain } from '../../providers/chain.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import { type DataAge, dataAge } from '../../providers/ip/data-age.js';
import type { DataAttribution, GeoLocation, GeoProvider } from '../../providers/ip/geo.js';
import type { AsnAnswer, GeoIpDatabase } from '../../providers/ip/geoip-mmdb.js';
import type { ParsedIp } from '../../providers/ip/ip-number.js';
import type { RelayLists, RelayVerdict } from '../../providers/ip/relay-lists.js';
import { NO_DATA } from '../../providers/types.js';
import type { ConnectionFacts } from './client-connection.js';
import type { IpGeoResponse, IpPrivacyResponse, MyIpResponse } from './ip.schema.js';
import { isPublic, parseIpParam, requirePublic } from './ip-param.js';

/** Seconds: ip-geo answers change with monthly database releases; ip-privacy with daily list refreshes. */
export const GEO_TTL = 24 * 60 * 60;
export const PRIVACY_TTL = 60 * 60;
/** How long my-ip waits for a PTR answer before answering without one. */
export const REVERSE_DNS_TIMEOUT_MS = 1500;
/** Retry-After while the relay lists have not loaded yet: the first download usually takes seconds. */
export const LISTS_LOADING_RETRY_AFTER = 30;

export const ACCURACY_NOTE =
  'Approximate location of the network the address belongs to (city level at best, often only the ' +
  'country); it never identifies a device or a home address.';

const RELAY_NOTE =
  'The address is a published relay egress: it identifies the relay exit that carried the traffic, not ' +
  'the user behind it, and it does not reveal the original address.';
const NO_RELAY_NOTE =
  'The address is not in the published iCloud Private Relay or Tor exit lists. That does not rule out ' +
  'a VPN, another proxy or a relay that publishes no list.';

type GeoDatabase = Pick<GeoIpDatabase, 'locate' | 'lookupAsn'>;
type Relays = Pick<RelayLists, 'classify' | 'status'>;

export interface IpGeoDeps {
  chain: Pick<ProviderChain, 'run'>;
  /** In chain order: the offline database first, RIPEstat after it. */
  providers: readonly GeoProvider[];
  database: GeoDatabase;
  relays: Relays;
  /** The app clock: how old the data is, as of this answer. */
  clock: Clock;
}

export interface IpGeoLookup {
  body: IpGeoResponse;
  cache: ChainResult<GeoLocation>['cache'];
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

export function countryOf(code: string | null): { code: string; name: string } | null {
  if (code === null) return null;
  let name = code;
  try {
    name = regionNames.of(code) ?? code;
  } catch {
    // Not a well-formed region code: keep the code as its own name.
  }
  return { code, name };
}

function accuracyNote(radiusKm: number | null): string {
  return radiusKm === null
    ? ACCURACY_NOTE
    : `${ACCURACY_NOTE} The source's accuracy radius: about ${radiusKm} km.`;
}

function mergeAttribution(...lists: (readonly DataAttribution[] | undefined)[]): DataAttribution[] {
  const out: DataAttribution[] = [];
  for (const list of lists) {
    for (const a of list ?? []) if (!out.some((o) => o.text === a.text && o.url === a.url)) out.push(a);
  }
  return out;
}

function ageOf(builtAt: string | null, clock: Clock): DataAge | null {
  return builtAt === null ? null : dataAge(builtAt, clock());
}

function isRelay(verdict: RelayVerdict): boolean | null {
  return verdict === undefined ? null : verdict !== null;
}

export async function lookupIpGeo(
  deps: IpGeoDeps,
  input: string,
  signal?: AbortSignal,
): Promise<IpGeoLookup> {
  const param = parseIpParam(input);
  requirePublic(param, 'special-use addresses have no public-network metadata');
  const { ip, text } = param;
  const result = await deps.chain.run({
    capability: 'ip-geo',
    providers: deps.providers,
    call: async (provider, s) => (await provider.locate(ip, s)) ?? NO_DATA,
    key: text,
    ttl: () => GEO_TTL,
    signal,
  });
  const geo = result.value;
  const asn = await deps.database.lookupAsn(ip);
  const body: IpGeoResponse = {
    ip: text,
    country: countryOf(geo.country_code),
    region: geo.region,
    city: geo.city,
    latitude: geo.latitude,
    longitude: geo.longitude,
    accuracy_note: accuracyNote(geo.accuracy_radius_km),
    timezone: geo.timezone,
    asn: asn?.asn ?? null,
    as_org: asn?.org ?? null,
    network: geo.network,
    is_relay: isRelay(deps.relays.classify(ip)),
    source: result.source,
    source_id: result.source_id,
    providers_tried: result.providers_tried,
    attribution: mergeAttribution(geo.attribution, asn?.attribution),
    // Computed per answer: a cached location keeps its build time, its age moves on.
    data: ageOf(geo.data_built_at, deps.clock),
  };
  return { body, cache: result.cache };
}

export function lookupIpPrivacy(
  relays: Relays & Pick<RelayLists, 'attempts'>,
  input: string,
): IpPrivacyResponse {
  const param = parseIpParam(input);
  requirePublic(param, 'only public addresses can be relay egress addresses');
  const verdict = relays.classify(param.ip);
  if (verdict === undefined) {
    throw new AppError(
      503,
      'unavailable',
      'the relay egress lists have not loaded yet; retry shortly (no match in the lists loaded so far)',
      { headers: { 'retry-after': String(LISTS_LOADING_RETRY_AFTER) }, providersTried: relays.attempts() },
    );
  }
  return {
    ip: param.text,
    is_relay: verdict !== null,
    relay: verdict,
    lists: relays.status(),
    note: verdict ? RELAY_NOTE : NO_RELAY_NOTE,
  };
}

export interface MyIpDeps {
  database: GeoDatabase;
  relays: Relays;
  resolver: Pick<DnsResolver, 'resolve'>;
  clock: Clock;
  reverseDnsTimeoutMs?: number;
}

async function reverseDns(
  resolver: MyIpDeps['resolver'],
  ip: string,
  timeoutMs: number,
): Promise<string | null> {
  try {
    const answer = await resolver.resolve(reverseName(ip), 'PTR', { signal: AbortSignal.timeout(timeoutMs) });
    const ptr = answer.value.answers.find((rr) => rr.type === 'PTR');
    return ptr?.type === 'PTR' ? ptr.data.host.slice(0, 253) : null;
  } catch {
    // No answer in time or every resolver failed: my-ip answers without a name, never with a 502.
    return null;
  }
}

async function offlineGeo(database: GeoDatabase, ip: ParsedIp, clock: Clock): Promise<MyIpResponse['geo']> {
  try {
    const geo = await database.locate(ip);
    if (geo === null) return null;
    return {
      country: countryOf(geo.country_code),
      region: geo.region,
      city: geo.city,
      latitude: geo.latitude,
      longitude: geo.longitude,
      timezone: geo.timezone,
      network: geo.network,
      accuracy_note: accuracyNote(geo.accuracy_radius_km),
      attribution: geo.attribution,
      data: ageOf(geo.data_built_at, clock),
    };
  } catch {
    return null;
  }
}

function asnOf(asn: AsnAnswer | null): MyIpResponse['asn'] {
  return asn ? { number: asn.asn, org: asn.org, attribution: asn.attribution } : null;
}

/** The my-ip body. Never throws for anything about the address: every part degrades to null. */
export async function describeConnection(deps: MyIpDeps, conn: ConnectionFacts): Promise<MyIpResponse> {
  const parsed = parseIpParamSafe(conn.ip);
  const base = {
    ip: conn.ip,
    edge: conn.edge,
    request: {
      protocol: conn.protocol,
      ...(conn.tlsVersion ? { tls_version: conn.tlsVersion } : {}),
      user_agent: conn.userAgent,
      via_trusted_proxy: conn.viaTrustedProxy,
    },
  };
  if (!parsed) {
    return {
      ...base,
      version: conn.ip.includes(':') ? 6 : 4,
      reverse_dns: null,
      geo: null,
      asn: null,
      relay: null,
    };
  }
  const { ip, text } = parsed;
  // Special-use addresses (a test client, a LAN peer behind no proxy) have no public facts to look up.
  if (!isPublic(text)) {
    return { ...base, ip: text, version: ip.version, reverse_dns: null, geo: null, asn: null, relay: null };
  }
  const [reverse, geo, asn] = await Promise.all([
    reverseDns(deps.resolver, text, deps.reverseDnsTimeoutMs ?? REVERSE_DNS_TIMEOUT_MS),
    offlineGeo(deps.database, ip, deps.clock),
    deps.database.lookupAsn(ip),
  ]);
  const verdict = deps.relays.classify(ip);
  return {
    ...base,
    ip: text,
    version: ip.version,
    reverse_dns: reverse,
    geo,
    asn: asnOf(asn),
    relay: verdict === undefined ? null : { is_relay: verdict !== null, match: verdict },
  };
}

function parseIpParamSafe(text: string): ReturnType<typeof parseIpParam> | undefined {
  try {
    return parseIpParam(text);
  } catch {
    return undefined;
  }
}
