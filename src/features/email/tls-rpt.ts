/**
 * SMTP TLS Reporting (RFC 8460 §3): one `v=TLSRPTv1` TXT record at
 * `_smtp._tls.<domain>` whose `rua` lists mailto: or https: destinations.
 */
import { type CheckStatus, type DnsOutcome, type Finding, finding } from './types.js';

export interface TlsRptEvaluation {
  state: 'none' | 'invalid' | 'valid' | 'error' | 'not_applicable';
  record: string | null;
  rua: string[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

const RFC = 'RFC 8460 §3';

/** Records that do not begin with "v=TLSRPTv1" are discarded (RFC 8460 §3; the version is case-sensitive). */
export function isTlsRptRecord(text: string): boolean {
  return /^v=TLSRPTv1[ \t]*(?:;|$)/.test(text);
}

export function evaluateTlsRpt(domain: string, txt: DnsOutcome<string>): TlsRptEvaluation {
  const base = { record: null, rua: [] };
  if (txt.kind !== 'answer') {
    return {
      ...base,
      state: 'error',
      status: 'error',
      summary: `The _smtp._tls lookup failed (${txt.message}); this check is left out of the score.`,
      findings: [],
    };
  }
  const records = txt.records.filter(isTlsRptRecord);
  if (records.length === 0) {
    return {
      ...base,
      state: 'none',
      status: 'warn',
      summary: 'No TLS-RPT record: you will not hear about TLS delivery failures to your MX hosts.',
      findings: [finding('warning', `No "v=TLSRPTv1" TXT record at _smtp._tls.${domain}.`, RFC)],
    };
  }
  if (records.length > 1) {
    return {
      ...base,
      record: records[0]!,
      state: 'invalid',
      status: 'fail',
      summary: `${records.length} TLS-RPT records: senders must act as if there were none.`,
      findings: [finding('error', `${records.length} "v=TLSRPTv1" records; exactly one is allowed.`, RFC)],
    };
  }
  const record = records[0]!;
  const findings: Finding[] = [];
  const fields = record
    .split(';')
    .map((f) => f.trim())
    .filter(Boolean)
    .slice(1);
  const ruaFields = fields.filter((f) => /^rua[ \t]*=/.test(f));
  if (ruaFields.length !== 1) {
    findings.push(
      finding(
        'error',
        ruaFields.length === 0 ? 'The record has no rua= field.' : 'rua= appears more than once.',
        RFC,
      ),
    );
    return {
      ...base,
      record,
      state: 'invalid',
      status: 'fail',
      summary: 'The TLS-RPT record is invalid.',
      findings,
    };
  }
  const rua = ruaFields[0]!
    .replace(/^rua[ \t]*=/, '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const uri of rua) {
    const problem = reportUriProblem(uri);
    if (problem) findings.push(finding('error', `rua "${uri}": ${problem}.`, RFC));
  }
  if (rua.length === 0) findings.push(finding('error', 'rua= lists no destination.', RFC));
  const valid = !findings.some((f) => f.severity === 'error');
  return {
    record,
    rua,
    state: valid ? 'valid' : 'invalid',
    status: valid ? 'pass' : 'fail',
    summary: valid
      ? `TLS-RPT reports go to ${rua.join(', ')}.`
      : 'The TLS-RPT record is invalid: senders send no reports.',
    findings,
  };
}

/** A destination must be a mailto: address or an https: URL (RFC 8460 §3). */
function reportUriProblem(uri: string): string | undefined {
  if (/^mailto:/i.test(uri)) {
    return /^[^@\s]+@[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+$/.test(uri.slice(7))
      ? undefined
      : 'not a valid mailto: address';
  }
  if (/^https:/i.test(uri)) {
    try {
      return new URL(uri).hostname ? undefined : 'an https: URL needs a host';
    } catch {
      return 'not a valid https: URL';
    }
  }
  return 'only mailto: and https: destinations are allowed';
}
