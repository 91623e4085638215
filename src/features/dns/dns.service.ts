/**
 * GET /api/dns: one question through the resolver chain, shaped for the API.
 */
import type { ChainResult } from '../../providers/chain.js';
import {
  type DnsAnswer,
  type DnsRR,
  type DnsRROf,
  edeName,
  presentation,
} from '../../providers/dns/index.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import type { DnsResponse } from './dns.schema.js';
import { type DnsApiType, parseDnsQuestion } from './dns-target.js';

export interface DnsLookup {
  body: DnsResponse;
  cache: ChainResult<DnsAnswer>['cache'];
}

/** The API's normalized record: the typed rdata plus its TTL. */
function toRecord(rr: DnsRR): DnsResponse['records'][number] {
  return { ...rr.data, ttl: rr.ttl };
}

export async function lookupDns(
  resolver: Pick<DnsResolver, 'resolve'>,
  target: string,
  type: DnsApiType,
  signal?: AbortSignal,
): Promise<DnsLookup> {
  const question = parseDnsQuestion(target, type);
  const result = await resolver.resolve(question.name, type, { signal });
  const shown = question.address ?? question.name;
  return { body: shape(result, shown, question.name, type), cache: result.cache };
}

/**
 * MX rows by preference, lower first, then by name (RFC 5321 §5.1; the order the email and
 * mail-server checks use, features/email/mx.ts sortMx). A resolver's order is arbitrary, and every
 * reader (site, CLI, MCP summaries) would otherwise sort again; the other rows, a CNAME chain
 * before the MX set, keep their places.
 */
function inPreferenceOrder(rrs: readonly DnsRR[]): DnsRR[] {
  const mx = rrs.filter((rr): rr is DnsRROf<'MX'> => rr.type === 'MX');
  if (mx.length < 2) return [...rrs];
  mx.sort((x, y) => x.data.priority - y.data.priority || x.data.exchange.localeCompare(y.data.exchange));
  let next = 0;
  return rrs.map((rr) => (rr.type === 'MX' ? mx[next++]! : rr));
}

function shape(
  result: ChainResult<DnsAnswer>,
  target: string,
  queryName: string,
  type: DnsApiType,
): DnsResponse {
  const answer = result.value;
  const body: DnsResponse = {
    target,
    query_name: queryName,
    type,
    rcode: answer.rcode,
    authenticated_data: answer.flags.ad,
    flags: answer.flags,
    answers: inPreferenceOrder(answer.answers).map((rr) => ({
      name: rr.name,
      type: rr.type,
      ttl: rr.ttl,
      data: presentation(rr),
    })),
    records: inPreferenceOrder(answer.answers.filter((rr) => rr.type === type)).map(toRecord),
    source: result.source,
    source_id: result.source_id,
    providers_tried: result.providers_tried,
  };
  if (answer.ede.length > 0) {
    body.extended_errors = answer.ede.map((e) => ({
      code: e.code,
      name: edeName(e.code),
      ...(e.text ? { text: e.text } : {}),
    }));
  }
  return body;
}
