/**
 * BIMI (draft-brand-indicators-for-message-identification): the assertion
 * record at `<selector>._bimi.<domain>`, the SVG logo it points to (checked
 * against the SVG Tiny Portable/Secure profile, draft-svg-tiny-ps-abrotman,
 * and the BIMI Group's 32 KB guidance), and the Verified Mark Certificate at
 * `a=` when there is one. Pure: the service fetches through outbound safety
 * and hands the bytes in; certificates are parsed with node:crypto.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { parseTagList, tagValue } from './tag-list.js';
import { type CheckStatus, type DnsOutcome, type FetchOutcome, type Finding, finding } from './types.js';

const BIMI = 'draft-brand-indicators-for-message-identification';
const TINY_PS = 'draft-svg-tiny-ps-abrotman';
const VMC = 'BIMI Group VMC Requirements';

/** BIMI Group guidance: the SVG should be at most 32 KB. */
export const SVG_MAX_BYTES = 32 * 1024;
/** A VMC chain is a few certificates; anything near this is not one. */
export const VMC_MAX_BYTES = 64 * 1024;
/** id-kp-BrandIndicatorforMessageIdentification, IANA "SMI Security for PKIX Extended Key Purpose" registry. */
export const BIMI_EKU = '1.3.6.1.5.5.7.3.31';
/** DER of OID 1.3.6.1.5.5.7.1.12, id-pe-logotype (RFC 9399), which carries the mark in a VMC. */
const LOGOTYPE_OID_DER = Buffer.from('06082b0601050507010c', 'hex');

/** A BIMI assertion record begins with v=BIMI1 (exact value). */
export function isBimiRecord(text: string): boolean {
  return /^v[ \t]*=[ \t]*BIMI1[ \t]*(?:;|$)/.test(text);
}

export interface BimiRecord {
  valid: boolean;
  /** l= and a= both empty: the domain declines to show a logo. */
  declined: boolean;
  location: string | null;
  authority: string | null;
  findings: Finding[];
}

export function parseBimiRecord(text: string): BimiRecord {
  const findings: Finding[] = [];
  const list = parseTagList(text);
  if (list.duplicates.length > 0) {
    findings.push(finding('error', `Tag ${list.duplicates.join(', ')} appears more than once.`, BIMI));
  }
  const uri = (tag: 'l' | 'a'): string | null => {
    const value = tagValue(list, tag)?.trim() ?? '';
    if (value === '') return null;
    if (value.includes(',')) {
      findings.push(finding('error', `${tag}= must be a single URI.`, BIMI));
      return null;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      findings.push(finding('error', `${tag}=${value} is not a URL.`, BIMI));
      return null;
    }
    if (url.protocol !== 'https:') {
      findings.push(finding('error', `${tag}=${value} must use https.`, BIMI));
      return null;
    }
    return value;
  };
  const location = uri('l');
  const authority = uri('a');
  const valid = !findings.some((f) => f.severity === 'error');
  const declined = valid && location === null && authority === null;
  return { valid, declined, location, authority, findings };
}

export interface SvgReport {
  url: string;
  http_status: number | null;
  bytes: number | null;
  sha256: string | null;
  title: string | null;
  valid: boolean;
}

/** Checks an SVG logo against SVG Tiny PS and BIMI guidance, without rendering it. */
export function checkSvg(
  body: Buffer,
  truncated: boolean,
): { valid: boolean; title: string | null; findings: Finding[] } {
  const findings: Finding[] = [];
  const fail = (message: string, rfc = TINY_PS) => findings.push(finding('error', message, rfc));
  if (truncated || body.length > SVG_MAX_BYTES) {
    fail(`The SVG is larger than ${SVG_MAX_BYTES / 1024} KB.`, 'BIMI Group Implementation Guide');
    return { valid: false, title: null, findings };
  }
  const text = body.toString('utf8').replace(/<!--[\s\S]*?-->/g, '');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) fail('DOCTYPE and ENTITY declarations are not allowed.');
  // Elements: name and attribute text. Linear-time patterns: no nested quantifiers.
  const elements = [...text.matchAll(/<([A-Za-z_][\w:.-]*)([^>]*)>/g)].map((m) => ({
    name: m[1]!,
    attrs: attributes(m[2]!),
  }));
  const root = elements[0];
  if (!root || localName(root.name) !== 'svg') {
    fail('The file is not an SVG document (its root element is not <svg>).');
    return { valid: false, title: null, findings };
  }
  if (root.attrs.version !== '1.2')
    fail(
      `The root <svg> must have version="1.2"${root.attrs.version ? `, not "${root.attrs.version}"` : ''}.`,
    );
  if (root.attrs.baseProfile !== 'tiny-ps')
    fail(
      `The root <svg> must have baseProfile="tiny-ps"${root.attrs.baseProfile ? `, not "${root.attrs.baseProfile}"` : ''}.`,
    );
  for (const attr of ['x', 'y'])
    if (attr in root.attrs)
      fail(`The root <svg> must not have ${attr === 'x' ? 'an' : 'a'} ${attr}= attribute.`);
  const title = /<title(?:\s[^>]*)?>([\s\S]*?)<\/title>/.exec(text)?.[1]?.trim() ?? null;
  if (!title) fail('The SVG must have a non-empty <title>.');
  const forbidden = new Set([
    'script',
    'foreignobject',
    'animate',
    'animatemotion',
    'animatecolor',
    'animatetransform',
    'set',
  ]);
  const seenForbidden = new Set<string>();
  for (const el of elements) {
    const name = localName(el.name).toLowerCase();
    if (forbidden.has(name) && !seenForbidden.has(name)) {
      seenForbidden.add(name);
      fail(`<${localName(el.name)}> is not allowed.`);
    }
    for (const [attr, value] of Object.entries(el.attrs)) {
      if (/^on/i.test(attr)) fail(`Event handler attribute ${attr}= on <${el.name}> is not allowed.`);
      if ((attr === 'href' || attr.endsWith(':href')) && !value.trim().startsWith('#')) {
        fail(`<${el.name} ${attr}="${value}"> refers to an external resource.`);
      }
    }
  }
  if (/url\(\s*['"]?(?!#)/i.test(text) || /@import/i.test(text))
    fail('The SVG refers to an external resource (url() or @import).');
  const viewBox = root.attrs.viewBox
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (viewBox?.length !== 4 || viewBox.some((n) => !Number.isFinite(n))) {
    findings.push(finding('warning', 'The root <svg> has no valid viewBox.', TINY_PS));
  } else if (viewBox[2] !== viewBox[3]) {
    findings.push(
      finding('warning', `The logo is ${viewBox[2]}×${viewBox[3]}; BIMI logos should be square.`, BIMI),
    );
  }
  return { valid: !findings.some((f) => f.severity === 'error'), title, findings };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function attributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    out[m[1]!] = m[2] ?? m[3] ?? '';
  }
  return out;
}

export interface VmcReport {
  url: string;
  http_status: number | null;
  valid: boolean;
  subject: string | null;
  issuer: string | null;
  not_before: string | null;
  not_after: string | null;
  domains: string[];
  bimi_eku: boolean;
  logotype: boolean;
}

/**
 * Checks a VMC (PEM chain, leaf first): dates, the BIMI extended key usage,
 * the domain among its subjectAltNames, the chain's own signatures, and the
 * logotype extension. The trust anchor (a Mark Verifying Authority root) is
 * not checked: this service ships no MVA root list, and says so.
 */
export function checkVmc(
  pem: string,
  domain: string,
  now: number,
): { valid: boolean; report: Omit<VmcReport, 'url' | 'http_status'>; findings: Finding[] } {
  const findings: Finding[] = [];
  const report: Omit<VmcReport, 'url' | 'http_status'> = {
    valid: false,
    subject: null,
    issuer: null,
    not_before: null,
    not_after: null,
    domains: [],
    bimi_eku: false,
    logotype: false,
  };
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certs: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      certs.push(new X509Certificate(block));
    } catch {
      findings.push(finding('error', 'A certificate in the VMC file does not parse.', VMC));
    }
  }
  const leaf = certs[0];
  if (!leaf) {
    findings.push(finding('error', 'The a= URL does not serve a PEM certificate.', BIMI));
    return { valid: false, report, findings };
  }
  const notBefore = Date.parse(leaf.validFrom);
  const notAfter = Date.parse(leaf.validTo);
  report.subject = leaf.subject.replace(/\n/g, ', ');
  report.issuer = leaf.issuer.replace(/\n/g, ', ');
  report.not_before = Number.isNaN(notBefore) ? null : new Date(notBefore).toISOString();
  report.not_after = Number.isNaN(notAfter) ? null : new Date(notAfter).toISOString();
  report.domains = (leaf.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  report.bimi_eku = Array.isArray(leaf.keyUsage) && leaf.keyUsage.includes(BIMI_EKU);
  report.logotype = leaf.raw.includes(LOGOTYPE_OID_DER);
  if (now < notBefore)
    findings.push(finding('error', `The VMC is not valid before ${report.not_before}.`, VMC));
  if (now > notAfter) findings.push(finding('error', `The VMC expired on ${report.not_after}.`, VMC));
  if (!report.bimi_eku) {
    findings.push(
      finding(
        'error',
        `The certificate lacks the BIMI extended key usage (${BIMI_EKU}): it is not a VMC.`,
        VMC,
      ),
    );
  }
  if (!report.domains.includes(domain)) {
    findings.push(
      finding(
        'error',
        `The VMC does not name ${domain} (it names ${report.domains.join(', ') || 'no domain'}).`,
        VMC,
      ),
    );
  }
  for (let i = 0; i + 1 < certs.length; i++) {
    const child = certs[i]!;
    const parent = certs[i + 1]!;
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      findings.push(
        finding('error', `Certificate ${i + 1} of the chain is not signed by certificate ${i + 2}.`, VMC),
      );
    }
  }
  if (!report.logotype)
    findings.push(finding('warning', 'The VMC has no logotype extension holding the mark.', 'RFC 9399'));
  findings.push(
    finding(
      'info',
      'The chain was checked for consistency; its root was not checked against the Mark Verifying Authorities.',
      VMC,
    ),
  );
  report.valid = !findings.some((f) => f.severity === 'error');
  return { valid: report.valid, report, findings };
}

export interface BimiLookup {
  selector: string;
  /** `<selector>._bimi.<domain>` */
  name: string;
  outcome: DnsOutcome<string>;
}

export interface BimiEvaluation {
  state: 'none' | 'declined' | 'invalid' | 'record' | 'error';
  selector: string | null;
  record: string | null;
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
  /** Candidates in order of preference (the caller's selectors, then default). */
  lookups: BimiLookup[];
  svg?: FetchOutcome;
  vmc?: FetchOutcome;
  /** DMARC at quarantine or reject (after t=y); undefined when DMARC could not be determined. */
  dmarcEnforced: boolean | undefined;
  now: number;
}

/** The candidate whose record the check uses: the first (in preference order) that has one. */
export function chooseBimiRecord(
  lookups: BimiLookup[],
): { lookup: BimiLookup; records: string[] } | undefined {
  for (const lookup of lookups) {
    if (lookup.outcome.kind !== 'answer') continue;
    const records = lookup.outcome.records.filter(isBimiRecord);
    if (records.length > 0) return { lookup, records };
  }
  return undefined;
}

export function evaluateBimi(input: BimiInput): BimiEvaluation {
  const base = {
    selector: null,
    record: null,
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
        finding('info', `No "v=BIMI1" record at ${input.lookups.map((l) => l.name).join(' or ')}.`, BIMI),
      ],
    };
  }
  const { lookup, records } = chosen;
  const record = records[0]!;
  const withRecord = { ...base, selector: lookup.selector, record };
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
          BIMI,
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
      findings: [...findings, finding('info', 'A declination record: no logo is to be shown.', BIMI)],
    };
  }
  if (input.dmarcEnforced === false) {
    findings.push(
      finding(
        'error',
        'BIMI requires DMARC at quarantine or reject (without t=y); receivers will not show the logo.',
        BIMI,
      ),
    );
  }

  let svg: SvgReport | null = null;
  let svgValid: boolean | undefined;
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
    findings.push(finding('warning', 'l= is empty: no SVG logo is published.', BIMI));
    svgValid = false;
  }

  let vmc: VmcReport | null = null;
  let vmcValid: boolean | undefined;
  if (parsed.authority) {
    const result = fetchedBody(input.vmc, parsed.authority, 'VMC', findings);
    vmc = {
      url: parsed.authority,
      http_status: result.status,
      valid: false,
      subject: null,
      issuer: null,
      not_before: null,
      not_after: null,
      domains: [],
      bimi_eku: false,
      logotype: false,
    };
    if (result.body) {
      const check = checkVmc(result.body.toString('utf8'), input.domain, input.now);
      findings.push(...check.findings);
      vmc = { ...vmc, ...check.report };
    }
    vmcValid = result.temporary ? undefined : vmc.valid;
  } else {
    findings.push(
      finding(
        'warning',
        'No VMC (empty a=): the largest mailbox providers show BIMI logos only with a mark certificate.',
        BIMI,
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
        : `BIMI record at ${lookup.name} with ${parts.join(' and ')}.`,
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
    findings.push(finding('error', `The ${what} at ${url} was not fetched.`, BIMI));
    return { status: null, truncated: false, temporary: false };
  }
  if (!outcome.ok) {
    findings.push(
      finding(
        outcome.temporary ? 'warning' : 'error',
        `Fetching the ${what} at ${url} failed: ${outcome.reason}.`,
        BIMI,
      ),
    );
    return { status: null, truncated: false, temporary: outcome.temporary };
  }
  const { status } = outcome.response;
  if (status !== 200) {
    findings.push(finding('error', `The ${what} at ${url} answered HTTP ${status}.`, BIMI));
    return { status, truncated: false, temporary: false };
  }
  return { status, body: outcome.response.body, truncated: outcome.response.truncated, temporary: false };
}
