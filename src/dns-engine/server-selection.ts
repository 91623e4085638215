/**
 * Which of a zone's server addresses to ask first, and how long to wait for
 * each: the smoothed round-trip time per address, as unbound keeps it
 * (util/rtt.c, iterator/iter_utils.c; Jacobson's estimator, RFC 6298 §2).
 *
 * - An address never measured counts as UNKNOWN_SERVER_NICENESS (376 ms), so
 *   a fast known server is preferred and an unknown one still gets explored.
 * - Each answer updates srtt (gain 1/8) and rttvar (gain 1/4); the timeout is
 *   srtt + 4·rttvar, clamped. A timeout doubles it (exponential backoff), so a
 *   dead server falls out of the band and is asked last until it answers again.
 * - Addresses within RTT_BAND (400 ms) of the best are tried in random order
 *   (load spread over a zone's servers, as resolvers do); the rest after them,
 *   fastest first.
 *
 * - An address that cannot be reached at all (a closed port, no route) is put
 *   last; "no route" (ENETUNREACH: a host without IPv6, say) puts its whole
 *   address family last, so the roots' IPv6 addresses cost one failed send,
 *   not thirteen.
 *
 * Kept in process, not in the shared cache: a round-trip time is a property
 * of this machine's path to the server (another instance elsewhere measures
 * its own), and it changes with every query. Entries go after HOST_TTL_MS
 * without use (unbound's infra-host-ttl, 900 s), so a server that was down is
 * measured afresh.
 */
import { LRUCache } from 'lru-cache';

/** unbound's UNKNOWN_SERVER_NICENESS: the initial RTO of a server never heard from. */
export const UNKNOWN_SERVER_NICENESS_MS = 376;
/** unbound's RTT_BAND: servers this close to the best are equally good. */
export const RTT_BAND_MS = 400;
const RTT_MIN_TIMEOUT_MS = 50;
const RTT_MAX_TIMEOUT_MS = 120_000;
const HOST_TTL_MS = 900_000;
const MAX_HOSTS = 10_000;
/** Errors that say the address's family has no route from here, not that this server is down. */
const NO_ROUTE = new Set(['ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

interface RttInfo {
  srtt: number;
  rttvar: number;
  rto: number;
}

function calcRto(r: { srtt: number; rttvar: number }): number {
  return Math.min(RTT_MAX_TIMEOUT_MS, Math.max(RTT_MIN_TIMEOUT_MS, r.srtt + 4 * r.rttvar));
}

function fresh(): RttInfo {
  const r = { srtt: 0, rttvar: UNKNOWN_SERVER_NICENESS_MS / 4, rto: 0 };
  r.rto = calcRto(r);
  return r;
}

export class ServerSelection {
  readonly #hosts = new LRUCache<string, RttInfo>({ max: MAX_HOSTS, ttl: HOST_TTL_MS });
  readonly #random: () => number;
  /** Until when (performance.now()) an address family is taken to have no route. */
  readonly #familyDown = new Map<4 | 6, number>();

  constructor(opts: { random?: () => number } = {}) {
    this.#random = opts.random ?? Math.random;
  }

  /** How long to wait for this address now (its RTO). */
  /** Whole milliseconds: the smoothed figures are fractional, and AbortSignal.timeout takes integers only. */
  timeoutMs(address: string): number {
    return Math.ceil((this.#hosts.get(address) ?? fresh()).rto);
  }

  /** A response came after `ms`. */
  answered(address: string, ms: number): void {
    const r = { ...(this.#hosts.get(address) ?? fresh()) };
    const delta = ms - r.srtt;
    r.srtt += delta / 8;
    r.rttvar += (Math.abs(delta) - r.rttvar) / 4;
    r.rto = calcRto(r);
    this.#hosts.set(address, r);
  }

  /**
   * No response within `waitedMs`, asked when its RTO was `rtoAtSend`: back off to twice what
   * it was given (exponential backoff).
   */
  lost(address: string, rtoAtSend: number, waitedMs: number): void {
    const r = { ...(this.#hosts.get(address) ?? fresh()) };
    // As unbound's rtt_lost: a concurrent success that already lowered the RTO wins.
    if (r.rto < rtoAtSend) return;
    r.rto = Math.min(RTT_MAX_TIMEOUT_MS, Math.max(r.rto, 2 * Math.max(rtoAtSend, waitedMs)));
    this.#hosts.set(address, r);
  }

  /** The address could not be reached (`code`: the system's error): last until it answers again. */
  unreachable(address: string, code?: string): void {
    const r = { ...(this.#hosts.get(address) ?? fresh()) };
    r.rto = RTT_MAX_TIMEOUT_MS;
    this.#hosts.set(address, r);
    if (code !== undefined && NO_ROUTE.has(code)) {
      this.#familyDown.set(family(address), performance.now() + HOST_TTL_MS);
    }
  }

  /** The addresses in the order to try them. */
  order(addresses: readonly string[]): string[] {
    const now = performance.now();
    const down = (address: string) => (this.#familyDown.get(family(address)) ?? 0) > now;
    const scored = addresses.map((address) => ({
      address,
      score: this.timeoutMs(address) + (down(address) ? RTT_MAX_TIMEOUT_MS : 0),
    }));
    scored.sort((a, b) => a.score - b.score);
    const best = scored[0]?.score ?? 0;
    const band = scored.filter((s) => s.score <= best + RTT_BAND_MS).map((s) => s.address);
    const rest = scored.filter((s) => s.score > best + RTT_BAND_MS).map((s) => s.address);
    for (let i = band.length - 1; i > 0; i--) {
      const j = Math.floor(this.#random() * (i + 1));
      [band[i], band[j]] = [band[j]!, band[i]!];
    }
    return [...band, ...rest];
  }
}

function family(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}
