/**
 * MTA-STS (RFC 8461): the `_mta-sts` TXT record, the policy served at
 * `https://mta-sts.<domain>/.well-known/mta-sts.txt`, and whether every MX
 * host matches one of the policy's `mx` patterns. Pure: the service fetches
 * the policy through outbound safety and hands the response in.
 */
import { type CheckStatus, type DnsOutcome, type FetchOutcome, type Finding, finding } from './types.js';

export type MtaStsMode = 'enforce' | 'testing' | 'none';

export interface MtaStsPolicy {
  version: string | null;
  mode: MtaStsMode | null;
  max_age: number | null;
  mx: string[];
}

export interface MtaStsEvaluation {
  /** policy: a valid record and policy; invalid: published but unusable (senders then act as if there were none). */
  state: 'none' | 'invalid' | 'policy' | 'error' | 'not_applicable';
  record: string | null;
  id: string | null;
  policy_url: string;
  http_status: number | null;
  policy: MtaStsPolicy | null;
  /** The policy as served (it is small: the fetch is capped at 64 KB). */
  policy_text: string | null;
  /** Every MX host matches a pattern; undefined when there is no usable policy or the MX list is unknown. */
  allMxCovered: boolean | undefined;
  uncovered_mx: string[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

/** RFC 8461 §3.2: max_age is at most 31557600 seconds (about a year). */
export const MTA_STS_MAX_AGE_LIMIT = 31_557_600;
/** RFC 8461 §3.3 lets senders cap the policy body; 64 KB is far above any real policy. */
export const MTA_STS_MAX_BYTES = 64 * 1024;
const ONE_WEEK = 604_800;

export function policyUrl(domain: string): string {
  return `https://mta-sts.${domain}/.well-known/mta-sts.txt`;
}

/** RFC 8461 §3.1: records that do not begin with "v=STSv1;" are discarded (the version is case-sensitive). */
export function isMtaStsRecord(text: string): boolean {
  return /^v=STSv1[ \t]*(?:;|$)/.test(text);
}

/** The one `_mta-sts` record, or why there is no usable one. */
export function parseMtaStsRecord(records: string[]): {
  state: 'none' | 'invalid' | 'ok';
  record: string | null;
  id: string | null;
  findings: Finding[];
} {
  const candidates = records.filter(isMtaStsRecord);
  if (candidates.length === 0) return { state: 'none', record: null, id: null, findings: [] };
  if (candidates.length > 1) {
    return {
      state: 'invalid',
      record: candidates[0]!,
      id: null,
      findings: [
        finding(
          'error',
          `${candidates.length} "v=STSv1" records: senders must treat the domain as having no policy.`,
          'RFC 8461 §3.1',
        ),
      ],
    };
  }
  const record = candidates[0]!;
  const fields = record
    .split(';')
    .map((f) => f.trim())
    .filter(Boolean)
    .slice(1);
  const id = fields.find((f) => f.startsWith('id='))?.slice(3);
  if (id === undefined || !/^[A-Za-z0-9]{1,32}$/.test(id)) {
    return {
      state: 'invalid',
      record,
      id: null,
      findings: [
        finding(
          'error',
          id === undefined ? 'The record has no id= field.' : `id=${id} must be 1–32 letters and digits.`,
          'RFC 8461 §3.1',
        ),
      ],
    };
  }
  return { state: 'ok', record, id, findings: [] };
}

/** Parses a policy body (RFC 8461 §3.2): `key: value` lines, LF or CRLF. */
export function parseMtaStsPolicy(text: string): {
  policy: MtaStsPolicy;
  valid: boolean;
  findings: Finding[];
} {
  const findings: Finding[] = [];
  const policy: MtaStsPolicy = { version: null, mode: null, max_age: null, mx: [] };
  const seen = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon < 0) {
      findings.push(
        finding('warning', `Line "${line}" is not "key: value" and is ignored.`, 'RFC 8461 §3.2'),
      );
      continue;
    }
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key !== 'mx' && seen.has(key)) {
      findings.push(
        finding('warning', `"${key}" appears more than once; the first value is used.`, 'RFC 8461 §3.2'),
      );
      continue;
    }
    seen.add(key);
    switch (key) {
      case 'version':
        policy.version = value;
        break;
      case 'mode':
        if (value === 'enforce' || value === 'testing' || value === 'none') policy.mode = value;
        else
          findings.push(finding('error', `mode: ${value} is not enforce, testing or none.`, 'RFC 8461 §3.2'));
        break;
      case 'max_age':
        if (/^[0-9]{1,10}$/.test(value) && Number(value) <= MTA_STS_MAX_AGE_LIMIT)
          policy.max_age = Number(value);
        else
          findings.push(
            finding(
              'error',
              `max_age: ${value} must be an integer from 0 to ${MTA_STS_MAX_AGE_LIMIT}.`,
              'RFC 8461 §3.2',
            ),
          );
        break;
      case 'mx':
        if (/^(?:\*\.)?[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+\.?$/.test(value))
          policy.mx.push(value.toLowerCase().replace(/\.$/, ''));
        else
          findings.push(
            finding('error', `mx: ${value} is not a host name or "*." pattern.`, 'RFC 8461 §3.2'),
          );
        break;
      default:
        findings.push(finding('info', `Unknown field "${key}" is ignored.`, 'RFC 8461 §3.2'));
    }
  }
  if (policy.version !== 'STSv1') {
    findings.push(
      finding(
        'error',
        policy.version === null
          ? 'The policy has no "version: STSv1" line.'
          : `version: ${policy.version} is not STSv1.`,
        'RFC 8461 §3.2',
      ),
    );
  }
  if (!seen.has('mode')) findings.push(finding('error', 'The policy has no mode.', 'RFC 8461 §3.2'));
  if (!seen.has('max_age')) findings.push(finding('error', 'The policy has no max_age.', 'RFC 8461 §3.2'));
  if (policy.mode !== null && policy.mode !== 'none' && policy.mx.length === 0) {
    findings.push(finding('error', `mode ${policy.mode} needs at least one mx pattern.`, 'RFC 8461 §3.2'));
  }
  if (policy.max_age !== null && policy.max_age < ONE_WEEK && policy.mode !== 'none') {
    findings.push(
      finding(
        'info',
        `max_age ${policy.max_age} s is under a week; RFC 8461 expects weeks or more so a policy outlives an attack.`,
        'RFC 8461 §3.2',
      ),
    );
  }
  const valid = !findings.some((f) => f.severity === 'error');
  return { policy, valid, findings };
}

/**
 * RFC 8461 §4.1: a pattern is a host name, or "*." plus a name, where the
 * wildcard stands for exactly one leftmost label. Case-insensitive.
 */
export function mxPatternMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (!p.startsWith('*.')) return p === h;
  const dot = h.indexOf('.');
  return dot > 0 && h.slice(dot + 1) === p.slice(2);
}

export interface MtaStsInput {
  domain: string;
  txt: DnsOutcome<string>;
  /** The policy fetch; absent when the TXT record did not call for one. */
  fetched?: FetchOutcome;
  /** Hosts the policy must cover: the MX exchanges, or the domain itself under implicit MX. Undefined if unknown. */
  mxHosts: string[] | undefined;
}

export function evaluateMtaSts(input: MtaStsInput): MtaStsEvaluation {
  const url = policyUrl(input.domain);
  const base = {
    record: null,
    id: null,
    policy_url: url,
    http_status: null,
    policy: null,
    policy_text: null,
    allMxCovered: undefined,
    uncovered_mx: [],
  };
  if (input.txt.kind !== 'answer') {
    return {
      ...base,
      state: 'error',
      status: 'error',
      summary: `The _mta-sts lookup failed (${input.txt.message}); this check is left out of the score.`,
      findings: [],
    };
  }
  const txt = parseMtaStsRecord(input.txt.records);
  if (txt.state === 'none') {
    return {
      ...base,
      state: 'none',
      status: 'warn',
      summary: 'No MTA-STS policy: senders deliver over TLS only opportunistically, open to downgrade.',
      findings: [finding('warning', `No "v=STSv1" TXT record at _mta-sts.${input.domain}.`, 'RFC 8461 §3.1')],
    };
  }
  const findings = [...txt.findings];
  const withRecord = { ...base, record: txt.record, id: txt.id };
  const invalid = (summary: string, extra: Partial<MtaStsEvaluation> = {}): MtaStsEvaluation => ({
    ...withRecord,
    ...extra,
    state: 'invalid',
    status: 'fail',
    summary,
    findings,
  });
  if (txt.state === 'invalid')
    return invalid('The _mta-sts record is invalid: senders act as if there were no policy.');
  const fetched = input.fetched;
  if (!fetched) return invalid('The policy was not fetched.');
  if (!fetched.ok) {
    if (fetched.temporary) {
      return {
        ...withRecord,
        state: 'error',
        status: 'error',
        summary: `The policy host could not be resolved (${fetched.reason}); this check is left out of the score.`,
        findings,
      };
    }
    findings.push(finding('error', `Fetching ${url} failed: ${fetched.reason}.`, 'RFC 8461 §3.3'));
    return invalid('The MTA-STS policy could not be fetched: senders act as if there were no policy.');
  }
  const { response } = fetched;
  if (response.status !== 200) {
    const redirect = response.status >= 300 && response.status < 400;
    findings.push(
      finding(
        'error',
        redirect
          ? `${url} answered ${response.status} (redirect to ${response.headers.location ?? '?'}); redirects must not be followed.`
          : `${url} answered HTTP ${response.status}; only 200 is a policy.`,
        'RFC 8461 §3.3',
      ),
    );
    return invalid(`The MTA-STS policy URL answered HTTP ${response.status}.`, {
      http_status: response.status,
    });
  }
  if (response.truncated) {
    findings.push(
      finding('error', `The policy is larger than ${MTA_STS_MAX_BYTES / 1024} KB.`, 'RFC 8461 §3.3'),
    );
    return invalid('The MTA-STS policy is too large.', { http_status: 200 });
  }
  const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'text/plain') {
    findings.push(
      finding(
        'warning',
        `The policy is served as "${contentType || 'no content type'}", not text/plain.`,
        'RFC 8461 §3.2',
      ),
    );
  }
  const text = response.body.toString('utf8');
  const parsed = parseMtaStsPolicy(text);
  findings.push(...parsed.findings);
  const withPolicy = { http_status: 200, policy: parsed.policy, policy_text: text };
  if (!parsed.valid || parsed.policy.mode === null)
    return invalid('The MTA-STS policy is invalid: senders ignore it.', withPolicy);

  const mode = parsed.policy.mode;
  let uncovered: string[] = [];
  let covered: boolean | undefined;
  if (mode !== 'none' && input.mxHosts !== undefined) {
    uncovered = input.mxHosts.filter((h) => !parsed.policy.mx.some((p) => mxPatternMatches(p, h)));
    covered = uncovered.length === 0;
    if (!covered) {
      findings.push(
        finding(
          mode === 'enforce' ? 'error' : 'warning',
          `MX host${uncovered.length > 1 ? 's' : ''} ${uncovered.join(', ')} match${uncovered.length > 1 ? '' : 'es'} no mx pattern (${parsed.policy.mx.join(', ')})${mode === 'enforce' ? ': compliant senders will refuse to deliver there' : ''}.`,
          'RFC 8461 §4.1',
        ),
      );
    }
  }
  let status: CheckStatus;
  let summary: string;
  if (mode === 'enforce') {
    status = covered === false ? 'fail' : findings.some((f) => f.severity !== 'info') ? 'warn' : 'pass';
    summary =
      covered === false
        ? 'MTA-STS enforce, but some MX hosts are not covered by the policy.'
        : 'MTA-STS in enforce mode covering every MX host.';
  } else if (mode === 'testing') {
    status = 'warn';
    summary = 'MTA-STS in testing mode: failures are reported, not enforced.';
    findings.push(
      finding('warning', 'mode: testing — senders deliver even when TLS validation fails.', 'RFC 8461 §5'),
    );
  } else {
    status = 'warn';
    summary = 'MTA-STS mode none: the policy is published but not applied.';
    findings.push(
      finding('warning', 'mode: none — senders treat the domain as having no active policy.', 'RFC 8461 §5'),
    );
  }
  return {
    ...withRecord,
    ...withPolicy,
    state: 'policy',
    allMxCovered: covered,
    uncovered_mx: uncovered,
    status,
    summary,
    findings,
  };
}
