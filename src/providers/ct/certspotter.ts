/**
 * Cert Spotter (SSLMate) CT Search API v1 as a CT provider: the fallback,
 * configured only when CERTSPOTTER_API_KEY is set (the chain skips it
 * otherwise). https://sslmate.com/help/reference/ct_search_api_v1
 *
 *   GET /v1/issuances?domain=D&include_subdomains=true&expand=dns_names&expand=issuer[&after=ID]
 *   Authorization: Bearer <key>
 *
 * Cert Spotter already coalesces a precertificate and its certificate into
 * one issuance, and lists unexpired issuances only ("Use this endpoint to list
 * all unexpired certificate issuances for a domain",
 * sslmate.com/certspotter/api/docs-v1), so every answer it gives lacks the
 * expired history: an `unexpired_only` gap. Pages are followed with
 * `after=<last id>` (issuances SSLMate discovered after that one) until an
 * empty page or MAX_CERTSPOTTER_PAGES; stopping at the cap is a `page_cap` gap.
 */

import { ProviderError } from '../../errors.js';
import { deadlineSignal } from '../deadline.js';
import { type HttpClient, joinUrl } from '../http-client.js';
import type { ProviderInfo } from '../types.js';
import { certificateDnsNames, isoUtc, issuerFromDn } from './normalize.js';
import type { CtGap, CtIssuance, CtProvider, CtRecords } from './types.js';

/** Pages fetched per lookup; each holds up to a few hundred issuances. */
export const MAX_CERTSPOTTER_PAGES = 10;
const MAX_PAGE_BYTES = 8 * 1024 * 1024;

/** One issuance with `expand=dns_names&expand=issuer` (the fields we read). */
interface CertspotterIssuance {
  id?: string;
  tbs_sha256?: string;
  dns_names?: string[];
  issuer?: { friendly_name?: string; name?: string };
  not_before?: string;
  not_after?: string;
  /** Present when the account's plan reports revocation. */
  revoked?: boolean;
}

const UNEXPIRED_ONLY: CtGap = {
  reason: 'unexpired_only',
  detail: 'Cert Spotter lists unexpired certificates only: expired history is missing.',
};

export interface CertspotterOptions {
  apiKey: string | undefined;
  /** Bound on each page request (the chain bounds the whole lookup). */
  pageTimeoutMs: number;
  /** Default MAX_CERTSPOTTER_PAGES. */
  maxPages?: number;
}

export class CertspotterProvider implements CtProvider {
  readonly info: ProviderInfo;
  readonly #http: Pick<HttpClient, 'getJson'>;
  readonly #opts: CertspotterOptions;

  constructor(info: ProviderInfo, http: Pick<HttpClient, 'getJson'>, opts: CertspotterOptions) {
    this.info = info;
    this.#http = http;
    this.#opts = opts;
  }

  async issuances(domain: string, signal: AbortSignal): Promise<CtRecords> {
    const { apiKey, pageTimeoutMs } = this.#opts;
    const maxPages = this.#opts.maxPages ?? MAX_CERTSPOTTER_PAGES;
    // The chain never calls an unconfigured provider; this guards a direct caller.
    if (apiKey === undefined) throw new ProviderError('upstream_error', 'Cert Spotter needs an API key');
    const issuances: CtIssuance[] = [];
    let after: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const url = issuancesUrl(this.info.endpoint, domain, after);
      const res = await this.#http.getJson<unknown>(url, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal: deadlineSignal(pageTimeoutMs, signal),
        maxBytes: MAX_PAGE_BYTES,
      });
      if (res.status !== 200) {
        const why = res.status === 401 || res.status === 403 ? ' (API key rejected)' : '';
        throw new ProviderError('http_status', `HTTP ${res.status} from ${new URL(url).host}${why}`);
      }
      if (!Array.isArray(res.data)) {
        throw new ProviderError('bad_response', 'Cert Spotter answered JSON that is not an array');
      }
      const rows = res.data as unknown[];
      if (rows.length === 0) return { issuances, gaps: [UNEXPIRED_ONLY] };
      for (const row of rows) {
        const issuance = certspotterToIssuance(row, this.info.id);
        if (issuance) issuances.push(issuance);
      }
      const last = (rows[rows.length - 1] as CertspotterIssuance | null)?.id;
      // Without a usable cursor the next page would repeat this one.
      if (typeof last !== 'string' || last === after) {
        throw new ProviderError('bad_response', 'Cert Spotter page has no usable id to continue after');
      }
      after = last;
    }
    const pageCap: CtGap = {
      reason: 'page_cap',
      detail:
        `Cert Spotter had more than the ${maxPages} pages read: the issuances it discovered after those ` +
        'are missing.',
    };
    return { issuances, gaps: [UNEXPIRED_ONLY, pageCap] };
  }
}

export function issuancesUrl(base: string, domain: string, after: string | undefined): string {
  const params = new URLSearchParams({ domain, include_subdomains: 'true' });
  params.append('expand', 'dns_names');
  params.append('expand', 'issuer');
  if (after !== undefined) params.set('after', after);
  return `${joinUrl(base, '/v1/issuances')}?${params}`;
}

export function certspotterToIssuance(raw: unknown, sourceId: string): CtIssuance | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const row = raw as CertspotterIssuance;
  const notBefore = isoUtc(row.not_before);
  const notAfter = isoUtc(row.not_after);
  if (typeof row.id !== 'string' || notBefore === undefined || notAfter === undefined) return undefined;
  const issuerDn = row.issuer?.name;
  const issuance: CtIssuance = {
    id: row.id,
    source_id: sourceId,
    // v1 gives no serial (only inside cert_der, an expansion we do not ask for).
    serial: null,
    issuer:
      typeof issuerDn === 'string' && issuerDn !== ''
        ? issuerFromDn(issuerDn)
        : { name: row.issuer?.friendly_name ?? 'unknown', organization: null },
    common_name: null,
    dns_names: certificateDnsNames(Array.isArray(row.dns_names) ? row.dns_names : []),
    not_before: notBefore,
    not_after: notAfter,
  };
  if (typeof row.revoked === 'boolean') issuance.revoked = row.revoked;
  return issuance;
}
