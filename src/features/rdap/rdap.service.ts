/**
 * GET /api/rdap: normalize the target, find the registry's object through
 * the provider chain (aggregator, then IANA bootstrap + authoritative
 * server), follow a thin registry's referral to the registrar, and shape
 * both objects for the API.
 *
 * The whole answer, registrar included, is cached through the one loader
 * (single-flight, failures never stored): 1 h for an answer, 5 min for
 * "not registered" and "no RDAP service" (valid negative answers, cached as
 * values and turned into a 404 on every read). An answer whose registrar
 * follow-up failed is not stored at all: it carries a failure.
 */
import { type CachedLoader, type Freshness, freshness, type Loaded } from '../../cache/cached.js';
import { AppError, type ProviderAttempt } from '../../errors.js';
import type { ProviderChain } from '../../providers/chain.js';
import type { RdapDocument, RdapQuery, RdapSource } from '../../providers/rdap/index.js';
import { domainFromRdap, networkFromRdap, registrarLink } from './normalize.js';
import type { RdapDomain, RdapResponse } from './rdap.schema.js';
import { parseRdapTarget } from './rdap-target.js';

export const RDAP_TTL_SECONDS = 3600;
export const RDAP_NOT_FOUND_TTL_SECONDS = 300;

export interface RdapLookupDeps {
  chain: Pick<ProviderChain, 'run'>;
  loader: Pick<CachedLoader, 'load'>;
  /** In chain order. */
  providers: readonly RdapSource[];
  /** Fetches the registrar's object from the registry's link (through outbound safety, HTTPS only). */
  registrar: { fetch(url: string, opts: { signal: AbortSignal }): Promise<RdapDocument> };
  /** Bounds the registrar follow-up, like one provider attempt. */
  timeoutMs: number;
}

export interface RdapLookup {
  body: RdapResponse;
  cache: Freshness;
}

/** What is cached per target: the answer, or the reason there is none (a 404 on every read). */
type Outcome =
  | { kind: 'found'; body: RdapResponse }
  | {
      kind: 'not_found';
      code: 'not_registered' | 'no_rdap_service';
      error: string;
      providers_tried: ProviderAttempt[];
    };

export async function lookupRdap(
  deps: RdapLookupDeps,
  target: string,
  type: 'domain' | 'ip',
  signal?: AbortSignal,
): Promise<RdapLookup> {
  const query = parseRdapTarget(target, type);
  const key = query.kind === 'domain' ? `rdap:domain:${query.name}` : `rdap:ip:${query.address}`;
  const loaded = await deps.loader.load<Outcome>(key, () => resolve(deps, query, signal));
  const outcome = loaded.value;
  if (outcome.kind === 'not_found') {
    throw new AppError(404, outcome.code, outcome.error, { providersTried: outcome.providers_tried });
  }
  return { body: outcome.body, cache: freshness(loaded) };
}

async function resolve(
  deps: RdapLookupDeps,
  query: RdapQuery,
  signal?: AbortSignal,
): Promise<Loaded<Outcome>> {
  // The loader caches the composed answer, so the chain itself runs uncached (no key).
  const result = await deps.chain.run({
    capability: 'rdap',
    providers: deps.providers,
    call: (provider, s) => provider.lookup(query, s),
    ttl: () => 0,
    signal,
  });
  const answer = result.value;
  const { providers_tried } = result;
  const subject = query.kind === 'domain' ? query.name : query.address;

  if (answer.outcome === 'not_registered') {
    const host = new URL(answer.url).host;
    const error =
      query.kind === 'domain'
        ? `${subject} is not registered: its registry (${host}) has no record of it (RDAP 404)`
        : `no registration found for ${subject}: ${host} has no record of it (RDAP 404)`;
    return {
      value: { kind: 'not_found', code: 'not_registered', error, providers_tried },
      ttl: RDAP_NOT_FOUND_TTL_SECONDS,
    };
  }
  if (answer.outcome === 'no_service') {
    const error =
      query.kind === 'domain'
        ? `the ${answer.scope} TLD publishes no RDAP service (it is not in the IANA RDAP bootstrap registry)`
        : `no RDAP service covers ${subject} in the IANA RDAP bootstrap registry`;
    return {
      value: { kind: 'not_found', code: 'no_rdap_service', error, providers_tried },
      ttl: RDAP_NOT_FOUND_TTL_SECONDS,
    };
  }

  const notes: string[] = [];
  let registrar: RdapDomain | null = null;
  let registrarFailed = false;
  const registry =
    query.kind === 'domain'
      ? domainFromRdap(answer.object, answer.url)
      : networkFromRdap(answer.object, answer.url);
  if (query.kind === 'domain') {
    const link = registrarLink(answer.object);
    if (link !== undefined && !sameResource(link, answer.url)) {
      const followed = await followRegistrar(deps, link, signal);
      registrar = followed.registrar;
      registrarFailed = followed.failed;
      if (followed.note) notes.push(followed.note);
    }
  }

  const body: RdapResponse = {
    target: subject,
    type: query.kind,
    registry,
    registrar,
    notes,
    source: result.source,
    source_id: result.source_id,
    providers_tried,
  };
  return { value: { kind: 'found', body }, ttl: registrarFailed ? 0 : RDAP_TTL_SECONDS };
}

interface Followed {
  registrar: RdapDomain | null;
  note?: string;
  /** An operational failure (not stored in the cache), as opposed to a definitive answer. */
  failed: boolean;
}

/**
 * The registrar referral of a thin registry (.com, .net). Whatever happens
 * here, the registry's answer stands: a failure leaves `registrar: null` and
 * a note, never a failed request.
 */
async function followRegistrar(deps: RdapLookupDeps, link: string, signal?: AbortSignal): Promise<Followed> {
  let host: string;
  try {
    const url = new URL(link);
    host = url.host;
    // Registration data only over TLS (RFC 7481); a referral is not operator-configured, so no exception.
    if (url.protocol !== 'https:') {
      return {
        registrar: null,
        note: `the registrar link (${link}) is not HTTPS; not followed`,
        failed: false,
      };
    }
  } catch {
    return {
      registrar: null,
      note: `the registrar link (${link}) is not a valid URL; not followed`,
      failed: false,
    };
  }
  const timeout = AbortSignal.timeout(deps.timeoutMs);
  try {
    const doc = await deps.registrar.fetch(link, {
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (doc.status === 'not_found') {
      return {
        registrar: null,
        note: `the registrar's RDAP server (${host}) has no record of this domain (404)`,
        failed: false,
      };
    }
    if (String(doc.object.objectClassName ?? '').toLowerCase() !== 'domain') {
      return {
        registrar: null,
        note: `the registrar's RDAP server (${host}) answered something other than a domain object`,
        failed: true,
      };
    }
    return { registrar: domainFromRdap(doc.object, doc.url), failed: false };
  } catch (err) {
    if (signal?.aborted) throw err;
    const why = timeout.aborted
      ? `no answer within ${deps.timeoutMs} ms`
      : err instanceof Error
        ? err.message
        : String(err);
    const kind =
      typeof (err as { kind?: unknown }).kind === 'string' ? `${(err as { kind: string }).kind}: ` : '';
    return {
      registrar: null,
      note: `registrar lookup at ${host} failed (${kind}${why}); showing the registry's data only`,
      failed: true,
    };
  }
}

/** A "related" link back to the object itself is no referral. */
function sameResource(link: string, url: string): boolean {
  try {
    return new URL(link).href.toLowerCase() === new URL(url).href.toLowerCase();
  } catch {
    return false;
  }
}
