/**
 * DMARC per RFC 9989 (which obsoletes RFC 7489 and RFC 9091): policy
 * discovery by the DNS Tree Walk, record syntax, the policy that applies to
 * the domain (p, or sp for a subdomain that inherits a parent's record; np
 * for one that does not exist) and `t=y` testing, and the aggregate-report
 * destinations with the external-destination authorization check of
 * RFC 9990.
 *
 * Why one file: the tree walk decides which record applies and how (p, sp or
 * np), so discovery and policy evaluation read the same walk state; the record
 * syntax is the smaller half and only this file uses it.
 */
import { sameOrganization } from '../../net/organizational-domain.js';
import { parseTagList, tagValue } from './tag-list.js';
import { type CheckStatus, type DnsOutcome, type Finding, finding, type MailDns } from './types.js';

export type DmarcPolicy = 'none' | 'quarantine' | 'reject';

const POLICIES: readonly DmarcPolicy[] = ['none', 'quarantine', 'reject'];
const STRENGTH: Record<DmarcPolicy, number> = { none: 0, quarantine: 1, reject: 2 };

/** RFC 9989's tags; anything else is ignored (with a note). */
const KNOWN_TAGS: ReadonlySet<string> = new Set([
  'v',
  'p',
  'sp',
  'np',
  'psd',
  't',
  'adkim',
  'aspf',
  'fo',
  'rua',
  'ruf',
]);
/** RFC 7489 tags that RFC 9989 removed. */
const REMOVED_TAGS: ReadonlySet<string> = new Set(['pct', 'rf', 'ri']);
/** RFC 9989's DNS Tree Walk asks at most 8 names. */
export const MAX_TREE_WALK_QUERIES = 8;

const RFC = 'RFC 9989';

/** The record's first tag is v=DMARC1 (the value is case-sensitive). */
export function isDmarcRecord(text: string): boolean {
  return /^v[ \t]*=[ \t]*DMARC1[ \t]*(?:;|$)/.test(text);
}

export interface ReportUri {
  uri: string;
  /** The mailbox of a usable mailto: URI. */
  address?: string;
  /** Its domain, lower case. */
  domain?: string;
}

export interface ParsedDmarc {
  /** False for records receivers discard: a tag given twice. */
  valid: boolean;
  /** The tags as written (lower-cased names), in order. */
  tags: { name: string; value: string }[];
  /** p as published, if valid. */
  p?: DmarcPolicy;
  sp?: DmarcPolicy;
  np?: DmarcPolicy;
  testing: boolean;
  rua: ReportUri[];
  ruf: ReportUri[];
  findings: Finding[];
}

export function parseDmarcRecord(text: string): ParsedDmarc {
  const list = parseTagList(text);
  const findings: Finding[] = [];
  const out: ParsedDmarc = { valid: true, tags: list.tags, testing: false, rua: [], ruf: [], findings };
  if (list.duplicates.length > 0) {
    out.valid = false;
    findings.push(
      finding(
        'error',
        list.duplicates.length > 1
          ? `Tags ${list.duplicates.join(', ')} appear more than once: the record is invalid.`
          : `Tag ${list.duplicates[0]} appears more than once: the record is invalid.`,
        `${RFC}, General Record Format`,
      ),
    );
  }
  for (const piece of list.malformed) {
    findings.push(
      finding(
        'warning',
        `"${piece}" is not a tag=value pair and is ignored.`,
        `${RFC}, General Record Format`,
      ),
    );
  }
  for (const { name } of list.tags) {
    if (REMOVED_TAGS.has(name)) {
      findings.push(
        finding('warning', `The "${name}" tag was removed by RFC 9989; current receivers ignore it.`, RFC),
      );
    } else if (!KNOWN_TAGS.has(name)) {
      findings.push(finding('info', `Unknown tag "${name}" is ignored.`, `${RFC}, General Record Format`));
    }
  }
  const policy = (tag: 'p' | 'sp' | 'np'): DmarcPolicy | undefined => {
    const value = tagValue(list, tag);
    if (value === undefined) return undefined;
    const lower = value.toLowerCase();
    if ((POLICIES as readonly string[]).includes(lower)) return lower as DmarcPolicy;
    findings.push(
      finding(
        tag === 'p' ? 'error' : 'warning',
        `${tag}=${value} is not none, quarantine or reject; it is ignored${tag === 'p' ? ' and the policy is none' : ''}.`,
        `${RFC}, Policy Record Format`,
      ),
    );
    return undefined;
  };
  out.p = policy('p');
  out.sp = policy('sp');
  out.np = policy('np');
  if (tagValue(list, 'p') === undefined) {
    findings.push(
      finding('warning', 'No p= tag: the record is treated as p=none.', `${RFC}, Policy Record Format`),
    );
  }
  const enumTag = (tag: string, allowed: string[]) => {
    const value = tagValue(list, tag);
    if (value !== undefined && !allowed.includes(value.toLowerCase())) {
      findings.push(
        finding('warning', `${tag}=${value} is not one of ${allowed.join(', ')}; it is ignored.`, RFC),
      );
    }
    return value?.toLowerCase();
  };
  out.testing = enumTag('t', ['y', 'n']) === 'y';
  enumTag('psd', ['y', 'n', 'u']);
  enumTag('adkim', ['r', 's']);
  enumTag('aspf', ['r', 's']);
  const fo = tagValue(list, 'fo');
  if (
    fo !== undefined &&
    !fo.split(':').every((o) => ['0', '1', 'd', 's'].includes(o.trim().toLowerCase()))
  ) {
    findings.push(
      finding('warning', `fo=${fo} is not a colon-separated list of 0, 1, d and s; it is ignored.`, RFC),
    );
  }
  out.rua = reportUris(tagValue(list, 'rua'), 'rua', findings);
  out.ruf = reportUris(tagValue(list, 'ruf'), 'ruf', findings);
  return out;
}

/**
 * URIs of one tag that are read; the rest are named in one finding. Receivers
 * may limit how many destinations they report to (RFC 7489 §6.2: at least
 * two), and each external one costs two DNS queries here: a record listing
 * thousands would otherwise make one request thousands of queries.
 */
export const MAX_REPORT_URIS = 10;

/** rua/ruf: comma-separated URIs; only mailto: is a report transport (RFC 9990, RFC 9991). */
function reportUris(value: string | undefined, tag: 'rua' | 'ruf', findings: Finding[]): ReportUri[] {
  if (value === undefined || value.trim() === '') return [];
  const rfc = tag === 'rua' ? 'RFC 9990' : 'RFC 9991';
  const listed = value.split(',');
  if (listed.length > MAX_REPORT_URIS) {
    findings.push(
      finding(
        'warning',
        `${tag}= lists ${listed.length} URIs: only the first ${MAX_REPORT_URIS} are checked here, and receivers may send reports to fewer (they need support only two).`,
        rfc,
      ),
    );
  }
  return listed.slice(0, MAX_REPORT_URIS).map((raw) => {
    let uri = raw.trim();
    const size = /!\d+[kmgt]?$/i.exec(uri);
    if (size) {
      findings.push(finding('info', `The "${size[0]}" size limit on ${uri} is obsolete and ignored.`, RFC));
      uri = uri.slice(0, size.index);
    }
    if (!/^mailto:/i.test(uri)) {
      findings.push(
        finding('warning', `${tag} URI "${uri}" is not mailto:; reports are only sent by email.`, rfc),
      );
      return { uri };
    }
    const address = decodeURIComponentSafe(uri.slice(7).split('?')[0]!);
    const at = address.lastIndexOf('@');
    const domain = at > 0 ? address.slice(at + 1).toLowerCase() : '';
    if (at <= 0 || !/^[a-z0-9_-]+(?:\.[a-z0-9_-]+)+$/.test(domain)) {
      findings.push(finding('warning', `${tag} URI "${uri}" is not a valid mailto: address.`, rfc));
      return { uri };
    }
    return { uri, address, domain };
  });
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The names the DNS Tree Walk asks, in order (RFC 9989, DNS Tree Walk): the
 * domain itself, then (for 8 or more labels) straight to its 7 rightmost
 * labels, then one label fewer at a time down to the top-level label. At most
 * 8 names.
 */
export function treeWalkDomains(domain: string): string[] {
  const labels = domain.split('.');
  const out = [domain];
  let count = labels.length;
  while (count > 1) {
    count = count >= 8 ? 7 : count - 1;
    out.push(labels.slice(labels.length - count).join('.'));
  }
  return out.slice(0, MAX_TREE_WALK_QUERIES);
}

export interface DmarcLookup {
  /** The name asked, `_dmarc.<domain>`. */
  name: string;
  result: 'record' | 'none' | 'multiple_records' | 'invalid' | 'error';
  /** CNAMEs the resolver followed for this name. */
  aliases: string[];
}

export interface ReportDestination {
  /** The destination's domain. */
  domain: string;
  tags: ('rua' | 'ruf')[];
  external: boolean;
  /** External only: true/false, or null when the authorization lookup failed. */
  authorized: boolean | null;
  /** The name whose TXT record would authorize it. */
  authorization_name?: string;
}

export interface DmarcEvaluation {
  state: 'found' | 'none' | 'error';
  record: string | null;
  /** The domain whose `_dmarc` name holds the record. */
  recordDomain: string | null;
  /** The record came from a parent domain through the tree walk. */
  inherited: boolean;
  parsed: ParsedDmarc | null;
  /** The tag whose policy applies to this domain. */
  policyTag: 'p' | 'sp' | null;
  /** The published policy that applies (before `t=y`). */
  requestedPolicy: DmarcPolicy | null;
  /** After `t=y`, which lowers it one step. */
  effectivePolicy: DmarcPolicy | null;
  testing: boolean;
  /** sp and np are not weaker than p (absent ones inherit, so they are not weaker). */
  subPoliciesNotWeaker: boolean;
  /** At least one usable mailto: rua. */
  hasRua: boolean;
  destinations: ReportDestination[];
  lookups: DmarcLookup[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

/** Discovers and evaluates the DMARC policy that applies to `domain`. */
export async function evaluateDmarc(domain: string, dns: MailDns): Promise<DmarcEvaluation> {
  const lookups: DmarcLookup[] = [];
  const findings: Finding[] = [];
  let found: { domain: string; record: string; parsed: ParsedDmarc } | undefined;
  for (const candidate of treeWalkDomains(domain)) {
    const name = `_dmarc.${candidate}`;
    const answer = await dns.txt(name);
    const aliases = answer.kind === 'answer' ? answer.aliases : [];
    if (answer.kind !== 'answer') {
      lookups.push({ name, result: 'error', aliases });
      return errorResult(domain, name, answer.kind === 'error' ? answer.message : 'invalid name', lookups);
    }
    if (aliases.length > 0) {
      findings.push(
        finding('info', `${name} is an alias: ${[name, ...aliases].join(' → ')}.`, 'RFC 1034 §3.6.2'),
      );
    }
    const records = answer.records.filter(isDmarcRecord);
    const misplaced = answer.records.filter((r) => !isDmarcRecord(r) && /v[ \t]*=[ \t]*DMARC1/i.test(r));
    for (const r of misplaced) {
      findings.push(
        finding(
          'error',
          `At ${name}: "${r}" is ignored; the record must begin with "v=DMARC1".`,
          `${RFC}, General Record Format`,
        ),
      );
    }
    if (records.length > 1) {
      lookups.push({ name, result: 'multiple_records', aliases });
      findings.push(
        finding(
          'error',
          `${name} has ${records.length} DMARC records; all of them are discarded.`,
          `${RFC}, DNS Tree Walk`,
        ),
      );
      continue;
    }
    if (records.length === 0) {
      lookups.push({ name, result: 'none', aliases });
      continue;
    }
    const parsed = parseDmarcRecord(records[0]!);
    findings.push(
      ...parsed.findings.map((f) => (candidate === domain ? f : { ...f, message: `${name}: ${f.message}` })),
    );
    if (!parsed.valid) {
      lookups.push({ name, result: 'invalid', aliases });
      continue;
    }
    lookups.push({ name, result: 'record', aliases });
    found = { domain: candidate, record: records[0]!, parsed };
    break;
  }

  if (!found) {
    findings.push(
      finding(
        'error',
        `No DMARC record at _dmarc.${domain} or any parent domain: receivers apply no policy.`,
        `${RFC}, DNS Tree Walk`,
      ),
    );
    return {
      ...empty(),
      state: 'none',
      lookups,
      status: 'fail',
      summary: `No DMARC policy applies to ${domain}: spoofed mail is not refused.`,
      findings,
    };
  }

  const { parsed } = found;
  const inherited = found.domain !== domain;
  if (inherited) {
    findings.push(
      finding(
        'info',
        `No record at _dmarc.${domain}; the record of ${found.domain} applies (its sp= policy, else p=).`,
        `${RFC}, DNS Tree Walk`,
      ),
    );
  }
  const p = parsed.p ?? 'none';
  const policyTag: 'p' | 'sp' = inherited && parsed.sp ? 'sp' : 'p';
  const requested = inherited ? (parsed.sp ?? p) : p;
  const effective = parsed.testing ? lowered(requested) : requested;
  const weaker: string[] = [];
  if (parsed.sp && STRENGTH[parsed.sp] < STRENGTH[p]) weaker.push(`sp=${parsed.sp}`);
  if (parsed.np && STRENGTH[parsed.np] < STRENGTH[p]) weaker.push(`np=${parsed.np}`);
  if (weaker.length > 0) {
    findings.push(
      finding(
        'warning',
        `${weaker.join(' and ')} ${weaker.length > 1 ? 'are' : 'is'} weaker than p=${p}: subdomains are less protected than the domain.`,
        `${RFC}, Policy Record Format`,
      ),
    );
  }
  // The summary says t=y itself; its finding is not repeated there as the reason for the warning.
  const testingFinding = parsed.testing
    ? finding(
        'warning',
        `t=y (testing): receivers apply ${effective} instead of ${requested}.`,
        `${RFC}, Policy Record Format`,
      )
    : undefined;
  if (testingFinding) findings.push(testingFinding);
  if (requested === 'none') {
    findings.push(
      finding('warning', 'The policy is none: failing mail is only reported, never refused.', RFC),
    );
  }
  const hasRua = parsed.rua.some((u) => u.address !== undefined);
  if (!hasRua) {
    findings.push(
      finding('warning', 'No usable rua= address: you receive no aggregate reports.', 'RFC 9990'),
    );
  }
  const destinations = await checkDestinations(found.domain, parsed, dns, findings);

  const warnings = findings.filter((f) => f.severity !== 'info');
  const status: CheckStatus = warnings.length > 0 ? 'warn' : 'pass';
  // A warning at full points (pct=100, a removed tag) says why in the summary, not only below it.
  const unsaid = warnings.filter((f) => f !== testingFinding);
  const why = unsaid[0]
    ? ` Warning: ${unsaid[0].message}${unsaid.length > 1 ? ` (and ${unsaid.length - 1} more below)` : ''}`
    : '';
  return {
    state: 'found',
    record: found.record,
    recordDomain: found.domain,
    inherited,
    parsed,
    policyTag,
    requestedPolicy: requested,
    effectivePolicy: effective,
    testing: parsed.testing,
    subPoliciesNotWeaker: weaker.length === 0,
    hasRua,
    destinations,
    lookups,
    status: effective === 'none' && status === 'pass' ? 'warn' : status,
    summary:
      `DMARC ${policyTag}=${requested}${parsed.testing ? ` with t=y (applied as ${effective})` : ''}` +
      `${inherited ? `, inherited from ${found.domain}` : ''}${hasRua ? ', with aggregate reports' : ', without aggregate reports'}.${why}`,
    findings,
  };
}

/** reject → quarantine → none: what t=y asks receivers to apply instead. */
export function lowered(policy: DmarcPolicy): DmarcPolicy {
  return policy === 'reject' ? 'quarantine' : 'none';
}

/**
 * A destination whose organizational domain differs from the policy domain's
 * must publish `<policy domain>._report._dmarc.<destination>` (or the `*`
 * wildcard name) with v=DMARC1, or reports are not sent there (RFC 9990,
 * Verifying External Destinations; RFC 7489 §7.1). Organizational domains
 * come from the Public Suffix List, so `reports.example.com` is no outsider
 * to `mail.example.com`, while two names under a shared suffix (`a.github.io`,
 * `b.github.io`) are.
 */
async function checkDestinations(
  policyDomain: string,
  parsed: ParsedDmarc,
  dns: MailDns,
  findings: Finding[],
): Promise<ReportDestination[]> {
  const byDomain = new Map<string, ReportDestination>();
  for (const [tag, uris] of [
    ['rua', parsed.rua],
    ['ruf', parsed.ruf],
  ] as const) {
    for (const uri of uris) {
      if (!uri.domain) continue;
      const existing = byDomain.get(uri.domain);
      if (existing) {
        if (!existing.tags.includes(tag)) existing.tags.push(tag);
        continue;
      }
      const external = !sameOrganization(policyDomain, uri.domain);
      byDomain.set(uri.domain, {
        domain: uri.domain,
        tags: [tag],
        external,
        authorized: external ? null : true,
        ...(external ? { authorization_name: `${policyDomain}._report._dmarc.${uri.domain}` } : {}),
      });
    }
  }
  const destinations = [...byDomain.values()];
  await Promise.all(
    destinations
      .filter((d) => d.external)
      .map(async (d) => {
        const [exact, wildcard] = await Promise.all([
          dns.txt(`${policyDomain}._report._dmarc.${d.domain}`),
          dns.txt(`*._report._dmarc.${d.domain}`),
        ]);
        if (authorizes(exact) || authorizes(wildcard)) d.authorized = true;
        else if (exact.kind === 'error' || wildcard.kind === 'error') d.authorized = null;
        else d.authorized = false;
      }),
  );
  for (const d of destinations.filter((x) => x.external)) {
    if (d.authorized === false) {
      findings.push(
        finding(
          'warning',
          `${d.tags.join('/')} destination ${d.domain} is outside ${policyDomain} and has not authorized it: no TXT "v=DMARC1" at ${d.authorization_name} or *._report._dmarc.${d.domain}, so reports will not be sent there.`,
          'RFC 9990, Verifying External Destinations',
        ),
      );
    } else if (d.authorized === null) {
      findings.push(
        finding(
          'info',
          `Could not check whether ${d.domain} accepts reports for ${policyDomain} (DNS failure).`,
          'RFC 9990',
        ),
      );
    }
  }
  return destinations;
}

function authorizes(answer: DnsOutcome<string>): boolean {
  return answer.kind === 'answer' && answer.records.some(isDmarcRecord);
}

function empty(): Omit<DmarcEvaluation, 'state' | 'lookups' | 'status' | 'summary' | 'findings'> {
  return {
    record: null,
    recordDomain: null,
    inherited: false,
    parsed: null,
    policyTag: null,
    requestedPolicy: null,
    effectivePolicy: null,
    testing: false,
    subPoliciesNotWeaker: false,
    hasRua: false,
    destinations: [],
  };
}

function errorResult(domain: string, name: string, message: string, lookups: DmarcLookup[]): DmarcEvaluation {
  return {
    ...empty(),
    state: 'error',
    lookups,
    status: 'error',
    summary: `DMARC for ${domain} could not be determined (${name}: ${message}); this check is left out of the score.`,
    findings: [finding('warning', `Temporary DNS failure at ${name}: ${message}.`, `${RFC}, DNS Tree Walk`)],
  };
}
