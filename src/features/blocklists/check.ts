/**
 * One list asked about one subject, through netdiag's own iterative resolver
 * (the lists refuse public resolvers: Spamhaus answers 127.255.255.254 to
 * them, URIBL 127.0.0.1). The answer is read as the list documents it: a
 * refusal code is a refusal, never a listing; a code outside 127.0.0.0/8 is
 * no answer at all (RFC 5782 §2.1); and a list that fails its RFC 5782 §5
 * test points — 127.0.0.2 (::FFFF:7F00:2, TEST) listed, 127.0.0.1
 * (::FFFF:7F00:1, INVALID) not — is broken, its answers not counted. The
 * test points are asked at most once per their TTL (the one cache).
 */
import type { Cache } from '../../cache/types.js';
import type { IterativeResolver } from '../../dns-engine/resolver.js';
import type { EngineRecord, ResolveResult } from '../../dns-engine/types.js';
import { blocklistQueryName } from '../../net/names.js';
import type { ListResult } from './blocklists.schema.js';
import { type Blocklist, queryZone } from './catalogue.js';

export type Subject = { ip: string } | { domain: string };

export interface CheckDeps {
  engine: Pick<IterativeResolver, 'resolve'>;
  cache: Pick<Cache, 'get' | 'set'>;
}

/** Health answers are reused this long at most, whatever their TTL. */
const MAX_HEALTH_SECONDS = 3600;
/** A negative answer without an SOA is reused this long. */
const DEFAULT_NEGATIVE_TTL = 300;

const TEST_POINTS = {
  ip4: { listed: { ip: '127.0.0.2' }, clean: { ip: '127.0.0.1' } },
  ip6: { listed: { ip: '::ffff:7f00:2' }, clean: { ip: '::ffff:7f00:1' } },
  domain: { listed: { domain: 'test' }, clean: { domain: 'invalid' } },
} as const satisfies Record<Blocklist['kind'], { listed: Subject; clean: Subject }>;

interface Read {
  kind: 'listed' | 'not_listed' | 'refused' | 'error';
  codes: string[];
  meaning?: string;
  ttl: number;
}

/** The A answer for `qname`, read as the list's codes say. */
async function ask(
  deps: CheckDeps,
  list: Blocklist,
  qname: string,
  signal: AbortSignal,
): Promise<Read & { result: ResolveResult }> {
  const result = await deps.engine.resolve(qname, 'A', { signal });
  if (result.status === 'failed') {
    const last = result.findings.at(-1);
    const why = last ? `${last.code}: ${last.detail}` : 'the list’s servers did not answer';
    return { kind: 'error', codes: [], meaning: why, ttl: 0, result };
  }
  const records = result.answer.filter(
    (r): r is EngineRecord & { type: 'A'; data: string } => r.type === 'A',
  );
  if (records.length === 0) return { kind: 'not_listed', codes: [], ttl: negativeTtl(result), result };
  const codes = records.map((r) => r.data);
  const ttl = Math.min(...records.map((r) => r.ttl ?? DEFAULT_NEGATIVE_TTL));
  return { ...readCodes(list, codes), codes, ttl, result };
}

/** RFC 2308 §5: the negative answer lives min(SOA TTL, SOA minimum). */
function negativeTtl(result: ResolveResult): number {
  const soa = result.authority.find((r) => r.type === 'SOA') as
    | (EngineRecord & { data: { minimum: number } })
    | undefined;
  return soa ? Math.min(soa.ttl ?? DEFAULT_NEGATIVE_TTL, soa.data.minimum) : DEFAULT_NEGATIVE_TTL;
}

/** What the codes mean for this list: a refusal, a listing (its meanings), or no usable answer. */
export function readCodes(
  list: Pick<Blocklist, 'codes' | 'refusalCodes' | 'bitmask'>,
  codes: readonly string[],
): Pick<Read, 'kind' | 'meaning'> {
  const outside = codes.find((c) => !c.startsWith('127.'));
  if (outside)
    return {
      kind: 'error',
      meaning: `answered ${outside}, which is no list code (RFC 5782 §2.1: codes are in 127.0.0.0/8)`,
    };
  const refusal = codes.find((c) => list.refusalCodes[c] !== undefined);
  if (refusal) return { kind: 'refused', meaning: list.refusalCodes[refusal]! };
  // 127.255.255.0/24 is where lists put their refusals (Spamhaus's, among others): never a listing.
  const reserved = codes.find((c) => c.startsWith('127.255.255.'));
  if (reserved)
    return {
      kind: 'refused',
      meaning: `answered ${reserved}, a refusal code (127.255.255.0/24) this catalogue does not document`,
    };
  if (list.bitmask) {
    const meanings = codes.flatMap((code) => {
      const bits = Number(code.split('.')[3]);
      return Object.entries(list.codes)
        .filter(([c]) => {
          const bit = Number(c.split('.')[3]);
          return bit > 0 && (bits & bit) === bit;
        })
        .map(([, meaning]) => meaning);
    });
    return {
      kind: 'listed',
      meaning:
        meanings.length > 0
          ? meanings.join('; ')
          : `code ${codes.join(', ')}, which the list does not document`,
    };
  }
  const meanings = codes.map((c) => list.codes[c] ?? `code ${c}, which the list does not document`);
  return { kind: 'listed', meaning: [...new Set(meanings)].join('; ') };
}

export type Health = { ok: true } | { ok: false; why: string } | { ok: null };

/** The list's RFC 5782 §5 test points, asked at most once per their TTL. */
async function health(deps: CheckDeps, list: Blocklist, zone: string, signal: AbortSignal): Promise<Health> {
  const key = `blocklists:health:${list.kind}:${list.zone}`;
  const cached = await deps.cache.get<Health>(key);
  if (cached) return cached.value;
  const points = TEST_POINTS[list.kind];
  const [listed, clean] = await Promise.all([
    ask(deps, list, blocklistQueryName(points.listed, zone), signal),
    ask(deps, list, blocklistQueryName(points.clean, zone), signal),
  ]);
  const label = (s: Subject) => ('ip' in s ? s.ip : s.domain.toUpperCase());
  let verdict: Health;
  if (
    listed.kind === 'error' ||
    clean.kind === 'error' ||
    listed.kind === 'refused' ||
    clean.kind === 'refused'
  ) {
    // Unknown, not broken: a refusal or an outage says nothing of the list's data. Not kept.
    return { ok: null };
  }
  if (clean.kind === 'listed')
    verdict = {
      ok: false,
      why: `it lists ${label(points.clean)}, which RFC 5782 §5 says no list may list: it lists everything`,
    };
  else if (listed.kind !== 'listed')
    verdict = {
      ok: false,
      why: `it does not list ${label(points.listed)}, the test point RFC 5782 §5 says every list lists`,
    };
  else verdict = { ok: true };
  const ttl = Math.max(1, Math.min(MAX_HEALTH_SECONDS, listed.ttl, clean.ttl));
  await deps.cache.set(key, verdict, ttl);
  return verdict;
}

/** One list, one subject: the answer's entry for it. */
export async function checkList(
  deps: CheckDeps,
  list: Blocklist,
  subject: Subject,
  signal: AbortSignal,
): Promise<ListResult> {
  const zone = queryZone(list);
  const shown = blocklistQueryName(subject, list.keySetting ? `{key}.${list.zone}` : list.zone);
  const base = { zone: list.zone, name: list.name, kind: list.kind, query: shown };
  if (zone === null)
    return {
      ...base,
      status: 'refused',
      meaning: `not asked: the list needs a key, and ${list.keySetting} is not set`,
    };
  const [state, read] = await Promise.all([
    health(deps, list, zone, signal),
    ask(deps, list, blocklistQueryName(subject, zone), signal),
  ]);
  if (state.ok === false) return { ...base, status: 'broken', meaning: `not counted: ${state.why}` };
  if (read.kind === 'error') return { ...base, status: 'error', meaning: read.meaning ?? 'no answer' };
  const ttl = { ttl: read.ttl };
  if (read.kind === 'not_listed') return { ...base, status: 'not_listed', ...ttl };
  const code = { code: read.codes[0]!, ...(read.codes.length > 1 ? { codes: read.codes } : {}) };
  if (read.kind === 'refused') return { ...base, status: 'refused', ...code, meaning: read.meaning!, ...ttl };
  const reason = await txtReason(deps, blocklistQueryName(subject, zone), signal);
  return {
    ...base,
    status: 'listed',
    ...code,
    meaning: read.meaning!,
    ...(reason ? { reason } : {}),
    delist_url: list.delistUrl,
    ...ttl,
  };
}

/** The TXT a list gives for a listing (RFC 5782 §2.1), its strings joined; undefined without one. */
async function txtReason(deps: CheckDeps, qname: string, signal: AbortSignal): Promise<string | undefined> {
  const result = await deps.engine.resolve(qname, 'TXT', { signal });
  const txt = result.answer.find((r) => r.type === 'TXT') as
    | (EngineRecord & { data: (Buffer | string)[] | Buffer | string })
    | undefined;
  if (!txt) return undefined;
  const parts = Array.isArray(txt.data) ? txt.data : [txt.data];
  return parts
    .map((p) => (Buffer.isBuffer(p) ? p.toString('utf8') : p))
    .join('')
    .slice(0, 500);
}
