import { ProviderError } from '../../errors.js';
import { RipestatAdapter } from '../ripestat-data.js';
import type {
  AddressOrigin,
  OriginProvider,
  PrefixOrigin,
  RoutingStatus,
  RoutingStatusProvider,
  Sighting,
  Visibility,
} from './types.js';

/** `data` of prefix-overview (fixture: test/fixtures/ripestat/prefix-overview.json). */
interface PrefixOverviewData {
  announced?: unknown;
  resource?: unknown;
  asns?: Array<{ asn?: unknown; holder?: unknown }>;
}

/** `data` of routing-status for a prefix or address (AS queries carry other fields). */
interface RoutingStatusData {
  resource?: unknown;
  query_time?: unknown;
  first_seen?: { prefix?: unknown; origin?: unknown; time?: unknown };
  last_seen?: { prefix?: unknown; origin?: unknown; time?: unknown };
  visibility?: {
    v4?: { ris_peers_seeing?: unknown; total_ris_peers?: unknown };
    v6?: { ris_peers_seeing?: unknown; total_ris_peers?: unknown };
  };
  origins?: Array<{ origin?: unknown; route_objects?: unknown }>;
  less_specifics?: Array<{ prefix?: unknown; origin?: unknown }>;
  more_specifics?: Array<{ prefix?: unknown; origin?: unknown }>;
}

/** Bounds what a hostile or broken answer can put into ours. */
const MAX_SPECIFICS = 50;

export class RipestatRouting extends RipestatAdapter implements OriginProvider, RoutingStatusProvider {
  async origin(ip: string, signal: AbortSignal): Promise<AddressOrigin> {
    const { data } = await this.dataCall('prefix-overview', ip, { signal });
    return parsePrefixOverview(data as PrefixOverviewData);
  }

  async routingStatus(ip: string, signal: AbortSignal): Promise<RoutingStatus> {
    const { data } = await this.dataCall('routing-status', ip, { signal });
    return parseRoutingStatus(data as RoutingStatusData);
  }
}

export function parsePrefixOverview(data: PrefixOverviewData): AddressOrigin {
  if (typeof data.announced !== 'boolean') {
    throw new ProviderError('bad_response', 'RIPEstat prefix-overview: answer without `announced`');
  }
  const origins = (Array.isArray(data.asns) ? data.asns : []).flatMap((entry) => {
    const asn = asNumber(entry?.asn);
    if (asn === null) return [];
    const holder =
      typeof entry.holder === 'string' && entry.holder.trim() !== '' ? entry.holder.trim() : null;
    return [{ asn, holder }];
  });
  // Not announced: `resource` echoes the query (an address), which is no prefix.
  const prefix = data.announced && isCidr(data.resource) ? data.resource : null;
  return { announced: data.announced, prefix, origins };
}

export function parseRoutingStatus(data: RoutingStatusData): RoutingStatus {
  const origins = (Array.isArray(data.origins) ? data.origins : [])
    .map((o) => asNumber(o?.origin))
    .filter((asn): asn is number => asn !== null);
  const lastSeen = sighting(data.last_seen);
  // For an address RIPEstat aligns `resource` to the covering routed prefix; when it does not, the
  // prefix last seen is the best we know.
  const prefix = isCidr(data.resource) ? data.resource : (lastSeen?.prefix ?? null);
  return {
    prefix: origins.length > 0 || lastSeen ? prefix : null,
    origins: [...new Set(origins)],
    visibility: {
      v4: visibility(data.visibility?.v4),
      v6: visibility(data.visibility?.v6),
    },
    first_seen: sighting(data.first_seen),
    last_seen: lastSeen,
    less_specifics: specifics(data.less_specifics),
    more_specifics: specifics(data.more_specifics),
    query_time: utcTime(data.query_time),
  };
}

function sighting(raw: RoutingStatusData['first_seen']): Sighting | null {
  const time = utcTime(raw?.time);
  if (!raw || time === null) return null;
  return { time, prefix: isCidr(raw.prefix) ? raw.prefix : null, origin: asNumber(raw.origin) };
}

function visibility(
  raw: { ris_peers_seeing?: unknown; total_ris_peers?: unknown } | undefined,
): Visibility | null {
  const seeing = raw?.ris_peers_seeing;
  const total = raw?.total_ris_peers;
  if (!Number.isInteger(seeing) || !Number.isInteger(total)) return null;
  return { ris_peers_seeing: seeing as number, total_ris_peers: total as number };
}

function specifics(raw: Array<{ prefix?: unknown; origin?: unknown }> | undefined): PrefixOrigin[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((s) => isCidr(s?.prefix))
    .slice(0, MAX_SPECIFICS)
    .map((s) => ({ prefix: s.prefix as string, origin: asNumber(s.origin) }));
}

/** An ASN given as 3333, "3333" or "AS3333"; null for anything else. */
export function asNumber(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const m = /^(?:AS)?(\d{1,10})$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  // 32-bit AS numbers (RFC 6793).
  return n <= 0xffffffff ? n : null;
}

/** RIPEstat times are UTC without a zone ("2000-08-18T08:00:00"); ours say so. */
function utcTime(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  const withZone = /(?:Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`;
  const ms = Date.parse(withZone);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function isCidr(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f:.]+\/\d{1,3}$/i.test(value);
}
