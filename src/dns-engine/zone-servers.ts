/**
 * Asking one zone cut's servers a question until one gives a usable answer:
 *
 * - every address passes outbound safety first (docs/architecture.md §3:
 *   net/address.ts classification, widened only by UNSAFE_ALLOW_TARGET_CIDRS):
 *   a private or special-use one is reported and never contacted;
 * - known addresses are tried fastest first (server-selection.ts), each over
 *   UDP, then over TCP when the answer is truncated (RFC 7766 §5);
 * - a silent server, a lame one (REFUSED, SERVFAIL, not authoritative, an
 *   upward referral) or a malformed answer is reported and the next is asked;
 * - when no known address is left, the next NS name without glue is looked up
 *   (a nested resolution, lazily, one name at a time: a referral naming thirty
 *   servers costs a lookup only for those needed), within the depth and
 *   per-cut limits;
 * - a second round gives the servers that were silent once more, with the
 *   backed-off timeout; then the zone has no usable server.
 *
 * Every query is taken from the request's budget and written to its log.
 */
import { classifyAddress, formatIpBytes, isAllowedByCidrs, parseIpBytes } from '../net/address.js';
import { rcodeName } from '../providers/dns/parameters.js';
import type { DecodedMessage } from '../providers/dns/wire.js';
import { exchange } from './exchange.js';
import { MAX_DEPTH, MAX_NS_LOOKUPS_PER_CUT, type RequestState } from './request.js';
import { classify, type Verdict } from './response.js';
import type { ServerSelection } from './server-selection.js';
import type { EngineQueryType, ZoneCut } from './types.js';

export interface ZoneServersDeps {
  selection: ServerSelection;
  /** UNSAFE_ALLOW_TARGET_CIDRS. */
  allowCidrs: readonly string[];
  /** Bounds on one server's wait; between them, its RTO decides. */
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** A name server's addresses, looked up at `depth` for `zone` (empty when there are none). */
  lookupAddresses(req: RequestState, name: string, zone: string, depth: number): Promise<string[]>;
}

export interface ServerAnswer {
  server: string;
  verdict: Exclude<Verdict, { kind: 'lame' }>;
  message: DecodedMessage;
  wire: Buffer;
}

/** Attempts per address: the first round, and one more for a server that was silent. */
const ROUNDS = 2;

/**
 * Asks `cut`'s servers about `question` at lookup depth `depth`; `cut` is the request's own
 * object: addresses looked up are added to it. Throws Stopped when no server is usable.
 */
export async function askZoneServers(
  deps: ZoneServersDeps,
  req: RequestState,
  cut: ZoneCut,
  question: { name: string; type: EngineQueryType },
  depth: number,
): Promise<ServerAnswer> {
  const tries = new Map<string, number>();
  const silent = new Set<string>();
  const refused = new Set<string>();
  const lookedUp = new Set<string>();
  const zone = cut.zone;

  const nameOf = (address: string) => cut.nameservers.find((ns) => ns.addresses.includes(address))?.name;
  const mayContact = (address: string): boolean => {
    if (refused.has(address)) return false;
    if (mayContactAddress(address, deps.allowCidrs)) return true;
    const cls = parseIpBytes(address) ? classifyAddress(address) : undefined;
    refused.add(address);
    const name = nameOf(address);
    req.report({
      code: 'address_refused',
      severity: 'warning',
      zone,
      server: address,
      ...(name ? { name } : {}),
      detail: `${name ?? 'a root hint'} is at ${address}, ${cls ? `a ${cls.range} address` : 'not an address'}: not contacted (outbound safety)`,
    });
    return false;
  };

  /** Looks up the next NS name that has no address yet; false when none is left to look up. */
  const lookUpNext = async (): Promise<boolean> => {
    const next = cut.nameservers.find((ns) => ns.name && ns.addresses.length === 0 && !lookedUp.has(ns.name));
    if (!next?.name) return false;
    if (depth + 1 > MAX_DEPTH) {
      req.report({
        code: 'depth_limit',
        severity: 'error',
        zone,
        name: next.name,
        detail: `the name servers of ${zone} are ${MAX_DEPTH + 1} lookups deep (${[...req.lookups, next.name].join(' → ')}): not looked up further`,
      });
      return false;
    }
    if (lookedUp.size >= MAX_NS_LOOKUPS_PER_CUT) {
      req.report({
        code: 'ns_lookup_limit',
        severity: 'error',
        zone,
        detail: `${zone} names more name servers without glue than are looked up for one zone (${MAX_NS_LOOKUPS_PER_CUT})`,
      });
      return false;
    }
    lookedUp.add(next.name);
    const found = await deps.lookupAddresses(req, next.name, zone, depth + 1);
    for (const address of found.map(canonicalAddress)) {
      if (address && !next.addresses.includes(address)) next.addresses.push(address);
    }
    return true;
  };

  for (let round = 1; round <= ROUNDS; round++) {
    for (;;) {
      const candidates = [...new Set(cut.nameservers.flatMap((ns) => ns.addresses))].filter(
        (a) => (tries.get(a) ?? 0) < round && (round === 1 || silent.has(a)) && mayContact(a),
      );
      const address = deps.selection.order(candidates)[0];
      if (address !== undefined) {
        tries.set(address, (tries.get(address) ?? 0) + 1);
        silent.delete(address);
        const answer = await askOne(deps, req, zone, address, nameOf(address), question, silent);
        if (answer) return answer;
        continue;
      }
      if (round === 1 && (await lookUpNext())) continue;
      break;
    }
  }
  const names = cut.nameservers.map((ns) => ns.name ?? ns.addresses.join(', ')).join(', ');
  throw req.stop({
    code: 'no_usable_servers',
    severity: 'error',
    zone,
    detail: `no server of ${zone} (${names}) gave a usable answer for ${question.name} ${question.type}`,
  });
}

/** One server: UDP, then TCP on truncation. Undefined when it gave nothing usable (reported). */
async function askOne(
  deps: ZoneServersDeps,
  req: RequestState,
  zone: string,
  address: string,
  nsName: string | null | undefined,
  question: { name: string; type: EngineQueryType },
  silent: Set<string>,
): Promise<ServerAnswer | undefined> {
  const who = nsName ? `${address} (${nsName})` : address;
  const base = { zone, server: address, ...(nsName ? { name: nsName } : {}) };
  const rto = deps.selection.timeoutMs(address);
  const timeoutMs = Math.min(deps.maxTimeoutMs, Math.max(deps.minTimeoutMs, rto));
  for (const transport of ['udp', 'tcp'] as const) {
    req.spend(zone);
    const wait = transport === 'udp' ? timeoutMs : deps.maxTimeoutMs;
    const result = await exchange(address, question, { transport, timeoutMs: wait, signal: req.signal });
    req.queries.push({
      server: address,
      zone,
      qname: question.name,
      qtype: question.type,
      transport,
      rcode: result.ok ? rcodeName(result.message.rcode) : null,
      ...(result.ok ? {} : { error: result.error }),
      ...(result.ok && result.message.flags.tc && transport === 'udp' ? { truncated: true } : {}),
      ms: result.ms,
    });
    if (!result.ok) {
      if (result.error === 'bad_response') {
        req.report({
          ...base,
          code: 'bad_response',
          severity: 'warning',
          detail: `${who}: ${result.detail}`,
        });
        return undefined;
      }
      if (result.error === 'timeout') {
        deps.selection.lost(address, rto, wait);
        silent.add(address);
      } else {
        // Refused or unroutable: asking again in this request would only fail again.
        deps.selection.unreachable(address, result.code);
      }
      const what = result.error === 'timeout' ? `did not answer within ${wait} ms` : 'could not be reached';
      req.report({
        ...base,
        code: 'server_unresponsive',
        severity: 'warning',
        detail: `${who}, a server of ${zone}, ${what} (${transport.toUpperCase()}: ${result.detail})`,
      });
      return undefined;
    }
    if (transport === 'udp') deps.selection.answered(address, result.ms);
    if (transport === 'udp' && result.message.flags.tc) continue;
    const verdict = classify(result.message, zone, question.name, question.type);
    if (verdict.kind === 'lame') {
      req.report({
        ...base,
        code: 'lame_server',
        severity: 'warning',
        detail: `${who}, a server of ${zone}, ${verdict.why} for ${question.name} ${question.type}`,
      });
      return undefined;
    }
    return { server: address, verdict, message: result.message, wire: result.wire };
  }
  return undefined;
}

/** Whether outbound safety lets the engine ask `address`: a public address, or one inside UNSAFE_ALLOW_TARGET_CIDRS. */
export function mayContactAddress(address: string, allowCidrs: readonly string[]): boolean {
  if (!parseIpBytes(address)) return false;
  return classifyAddress(address).public || isAllowedByCidrs(address, allowCidrs);
}

/** An address in its one spelling; undefined for text that is no address. */
export function canonicalAddress(text: string): string | undefined {
  const bytes = parseIpBytes(text);
  return bytes ? formatIpBytes(bytes) : undefined;
}
