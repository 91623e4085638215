/**
 * BIMI (draft-brand-indicators-for-message-identification): the evaluation
 * of a domain's assertion record (bimi-record.ts, found by bimi-discovery.ts
 * at the domain or its organizational domain), the SVG logo it points to
 * (bimi-svg.ts) and the Verified Mark Certificate at `a=` when there is one
 * (bimi-vmc.ts), with DMARC enforcement as the prerequisite. Pure: the
 * service fetches through outbound safety and hands the bytes in.
 */
import { createHash } from 'node:crypto';
import { organizationalDomain } from '../../net/organizational-domain.js';
import { BIMI_SPEC, type BimiLookup, chooseBimiRecord, parseBimiRecord } from './bimi-record.js';
import { bundledMarkRoots, type MarkRoots } from './bimi-roots.js';
import { checkSvg, type SvgReport } from './bimi-svg.js';
import { checkVmc, unreadVmc, type VmcReport } from './bimi-vmc.js';
import { type CheckStatus, type FetchOutcome, type Finding, finding } from './types.js';

export { type BimiDiscovery, discoverBimi } from './bimi-discovery.js';
export {
  type BimiLookup,
  type BimiRecord,
  chooseBimiRecord,
  isBimiRecord,
  parseBimiRecord,
} from './bimi-record.js';
export { type MarkRoots, markRootsLoader } from './bimi-roots.js';
export { checkSvg, SVG_MAX_BYTES, type SvgReport } from './bimi-svg.js';
export { BIMI_EKU, checkVmc, VMC_MAX_BYTES, type VmcReport } from './bimi-vmc.js';

export interface BimiEvaluation {
  state: 'none' | 'declined' | 'invalid' | 'record' | 'error';
  selector: string | null;
  record: string | null;
  /** The domain the record was found at: the domain itself, or its organizational domain. */
  recordDomain: string | null;
  location: string | null;
  authority: string | null;
  svg: SvgReport | null;
  vmc: VmcReport | null;
  recordValid: boolean;
  /** undefined: not judged (no l=, or a temporary DNS failure fetching it). */
  svgValid: boolean | undefined;
  vmcValid: boolean | undefined;
  dmarcEnforced: boolean | undefined;
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

export interface BimiInput {
  domain: string;
  /** Candidates in order of preference (the caller's selectors, then default; each at the domain, then its organizational domain). */
  lookups: BimiLookup[];
  svg?: FetchOutcome;
  vmc?: FetchOutcome;
  /** DMARC at quarantine or reject (after t=y); undefined when DMARC could not be determined. */
  dmarcEnforced: boolean | undefined;
  now: number;
  /** The Mark Verifying Authority roots a VMC must chain to; default the bundled list. */
  markRoots?: MarkRoots;
}

export function evaluateBimi(input: BimiInput): BimiEvaluation {
  const base = {
    selector: null,
    record: null,
    recordDomain: null,
    location: null,
    authority: null,
    svg: null,
    vmc: null,
    recordValid: false,
    svgValid: undefined,
    vmcValid: undefined,
    dmarcEnforced: input.dmarcEnforced,
  };
  const chosen = chooseBimiRecord(input.lookups);
  if (!chosen) {
    const failed = input.lookups.find((l) => l.outcome.kind === 'error');
    if (failed && failed.outcome.kind === 'error') {
      return {
        ...base,
        state: 'error',
        status: 'error',
        summary: `The ${failed.name} lookup failed (${failed.outcome.message}); this check is left out of the score.`,
        findings: [],
      };
    }
    return {
      ...base,
      state: 'none',
      status: 'info',
      summary: 'No BIMI record: no brand logo is shown next to your mail.',
      findings: [
        finding(
          'info',
          `No "v=BIMI1" record at ${input.lookups.map((l) => l.name).join(' or ')}.`,
          BIMI_SPEC,
        ),
      ],
    };
  }
  const { lookup, records } = chosen;
  const record = records[0]!;
  const withRecord = { ...base, selector: lookup.selector, record, recordDomain: lookup.domain };
  if (records.length > 1) {
    return {
      ...withRecord,
      state: 'invalid',
      status: 'fail',
      summary: `${records.length} BIMI records at ${lookup.name}: receivers use none.`,
      findings: [
        finding(
          'error',
          `${records.length} "v=BIMI1" records at ${lookup.name}; exactly one is allowed.`,
          BIMI_SPEC,
        ),
      ],
    };
  }
  const parsed = parseBimiRecord(record);
  const findings = [...parsed.findings];
  const withTags = { ...withRecord, location: parsed.location, authority: parsed.authority };
  if (!parsed.valid) {
    return {
      ...withTags,
      state: 'invalid',
      status: 'fail',
      summary: 'The BIMI record is invalid.',
      findings,
    };
  }
  if (parsed.declined) {
    return {
      ...withTags,
      recordValid: true,
      state: 'declined',
      status: 'info',
      summary: 'The BIMI record declines to publish a logo (empty l= and a=).',
      findings: [...findings, finding('info', 'A declination record: no logo is to be shown.', BIMI_SPEC)],
    };
  }
  if (input.dmarcEnforced === false) {
    findings.push(
      finding(
        'error',
        'BIMI requires DMARC at quarantine or reject (without t=y); receivers will not show the logo.',
        BIMI_SPEC,
      ),
    );
  }

  let svg: SvgReport | null = null;
  let svgValid: boolean | undefined;
  let svgBody: Buffer | undefined;
  if (parsed.location) {
    const result = fetchedBody(input.svg, parsed.location, 'logo', findings);
    svg = {
      url: parsed.location,
      http_status: result.status,
      bytes: null,
      sha256: null,
      title: null,
      valid: false,
    };
    if (result.body) {
      svgBody = result.truncated ? undefined : result.body;
      const check = checkSvg(result.body, result.truncated);
      findings.push(...check.findings);
      svg = {
        ...svg,
        bytes: result.body.length,
        sha256: createHash('sha256').update(result.body).digest('hex'),
        title: check.title,
        valid: check.valid,
      };
    }
    svgValid = result.temporary ? undefined : svg.valid;
  } else {
    findings.push(finding('warning', 'l= is empty: no SVG logo is published.', BIMI_SPEC));
    svgValid = false;
  }

  let vmc: VmcReport | null = null;
  let vmcValid: boolean | undefined;
  if (parsed.authority) {
    const result = fetchedBody(input.vmc, parsed.authority, 'VMC', findings);
    vmc = { url: parsed.authority, http_status: result.status, ...unreadVmc() };
    if (result.body) {
      const org = organizationalDomain(input.domain);
      const check = checkVmc({
        pem: result.body.toString('utf8'),
        domains: org && org !== input.domain ? [input.domain, org] : [input.domain],
        selector: lookup.selector,
        location: svgBody,
        roots: (input.markRoots ?? bundledMarkRoots)(),
        now: input.now,
      });
      findings.push(...check.findings);
      vmc = { ...vmc, ...check.report };
    }
    vmcValid = result.temporary ? undefined : vmc.valid;
  } else {
    findings.push(
      finding(
        'warning',
        'No VMC (empty a=): the largest mailbox providers show BIMI logos only with a mark certificate.',
        BIMI_SPEC,
      ),
    );
    vmcValid = false;
  }

  const status: CheckStatus =
    input.dmarcEnforced === false
      ? 'fail'
      : findings.some((f) => f.severity === 'error')
        ? 'fail'
        : findings.some((f) => f.severity === 'warning')
          ? 'warn'
          : 'pass';
  const parts = [
    svgValid ? 'a valid SVG logo' : 'no valid SVG logo',
    vmcValid ? 'a valid VMC' : 'no valid VMC',
  ];
  return {
    ...withTags,
    svg,
    vmc,
    recordValid: true,
    svgValid,
    vmcValid,
    state: 'record',
    status,
    summary:
      input.dmarcEnforced === false
        ? 'BIMI record published, but DMARC is not at enforcement, so no logo is shown.'
        : `BIMI record at ${lookup.name}${lookup.domain === input.domain ? '' : ' (the organizational domain’s)'} with ${parts.join(' and ')}.`,
    findings,
  };
}

/** The body of a fetched BIMI resource, or a finding saying why there is none. */
function fetchedBody(
  outcome: FetchOutcome | undefined,
  url: string,
  what: string,
  findings: Finding[],
): { status: number | null; body?: Buffer; truncated: boolean; temporary: boolean } {
  if (!outcome) {
    findings.push(finding('error', `The ${what} at ${url} was not fetched.`, BIMI_SPEC));
    return { status: null, truncated: false, temporary: false };
  }
  if (!outcome.ok) {
    findings.push(
      finding(
        outcome.temporary ? 'warning' : 'error',
        `Fetching the ${what} at ${url} failed: ${outcome.reason}.`,
        BIMI_SPEC,
      ),
    );
    return { status: null, truncated: false, temporary: outcome.temporary };
  }
  const { status } = outcome.response;
  if (status !== 200) {
    findings.push(finding('error', `The ${what} at ${url} answered HTTP ${status}.`, BIMI_SPEC));
    return { status, truncated: false, temporary: false };
  }
  return { status, body: outcome.response.body, truncated: outcome.response.truncated, temporary: false };
}
