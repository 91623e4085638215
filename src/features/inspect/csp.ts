/**
 * Content Security Policy (CSP Level 3, https://www.w3.org/TR/CSP3/):
 * parsing the enforced and report-only headers, flagging `'unsafe-inline'`
 * and `'unsafe-eval'`, and the `frame-ancestors` directive that
 * X-Frame-Options defers to. Pure functions.
 */
import { type HeaderFinding, missing, type Verdict } from './verdict.js';

/** One parsed policy: directive name (lower case) → source expressions as written. */
export interface CspPolicy {
  directives: Record<string, string[]>;
}

/**
 * CSP3 §2.2.1 "parse a serialized CSP": split strictly on ";", trim, the
 * directive name is the run up to whitespace (ASCII-lower-cased), the value
 * the rest split on whitespace; a directive name seen before in the same
 * policy is ignored (the first one wins), and so is a non-ASCII token.
 */
export function parseSerializedCsp(serialized: string): CspPolicy {
  const directives: Record<string, string[]> = {};
  for (const raw of serialized.split(';')) {
    const token = raw.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: "not an ASCII string" is the rule
    if (token === '' || /[^\x00-\x7f]/.test(token)) continue;
    const [name = '', ...value] = token.split(/[\t\n\f\r ]+/);
    const key = name.toLowerCase();
    if (Object.hasOwn(directives, key)) continue;
    directives[key] = value;
  }
  return { directives };
}

/**
 * CSP3 §2.2.2 "parse a response's Content Security Policies": every
 * comma-separated member of every field line is a policy of its own, and
 * policies with no directives are dropped. All of them are enforced at once:
 * a load must pass every policy.
 */
export function parseCspHeader(lines: readonly string[]): CspPolicy[] {
  return lines
    .flatMap((line) => line.split(','))
    .map(parseSerializedCsp)
    .filter((p) => Object.keys(p.directives).length > 0);
}

/** The directive a script check falls back through (CSP3 §6.8.3, script-src-elem/attr → script-src → default-src). */
const SCRIPT_FALLBACK = ['script-src', 'default-src'] as const;
const STYLE_FALLBACK = ['style-src', 'default-src'] as const;
const OBJECT_FALLBACK = ['object-src', 'default-src'] as const;

function effective(
  policy: CspPolicy,
  fallback: readonly string[],
): { name: string; sources: string[] } | undefined {
  for (const name of fallback) {
    const sources = policy.directives[name];
    if (sources) return { name, sources };
  }
  return undefined;
}

const lower = (sources: readonly string[]) => sources.map((s) => s.toLowerCase());
const isNonceOrHash = (s: string) => /^'(nonce-|sha256-|sha384-|sha512-)/.test(s);

/**
 * CSP3 §6.7.3.3 "does a source list allow all inline behavior": only with
 * 'unsafe-inline', and not when a nonce or hash source is present (or, for
 * scripts, 'strict-dynamic'): browsers then ignore 'unsafe-inline', which
 * sites keep only as a fallback for CSP1 browsers.
 */
export function allowsAllInline(sources: readonly string[], type: 'script' | 'style'): boolean {
  const s = lower(sources);
  if (!s.includes("'unsafe-inline'")) return false;
  if (s.some(isNonceOrHash)) return false;
  return !(type === 'script' && s.includes("'strict-dynamic'"));
}

/**
 * Script sources that allow any host: `*` and the bare schemes http:, https:,
 * data: and blob: (an attacker can host a script anywhere under them).
 * 'strict-dynamic' makes browsers ignore host and scheme sources (CSP3 §8.2).
 */
export function allowsAnyScriptHost(sources: readonly string[]): boolean {
  const s = lower(sources);
  if (s.includes("'strict-dynamic'")) return false;
  return s.some((src) => src === '*' || ['http:', 'https:', 'data:', 'blob:'].includes(src));
}

export interface CspFlag {
  /** Which policy (0-based, in header order) and directive carries the keyword. */
  policy: number;
  directive: string;
  keyword: "'unsafe-inline'" | "'unsafe-eval'" | "'unsafe-hashes'";
  /** False when browsers ignore it here (a nonce, hash or 'strict-dynamic' beside 'unsafe-inline'). */
  effective: boolean;
}

export interface CspFinding extends HeaderFinding {
  policies: CspPolicy[];
  /** Inline script runs: every script-restricting policy allows all inline script (or none restricts scripts). */
  unsafe_inline: boolean;
  /** eval() and friends run: every script-restricting policy has 'unsafe-eval'. */
  unsafe_eval: boolean;
  /** Every occurrence of an unsafe-* keyword, in any directive. */
  flags: CspFlag[];
  /** The Content-Security-Policy-Report-Only value, which is reported on but never enforced. */
  report_only: string | null;
}

const UNSAFE_KEYWORDS: readonly CspFlag['keyword'][] = [
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'unsafe-hashes'",
];

export function evaluateCsp(lines: readonly string[], reportOnlyLines: readonly string[]): CspFinding {
  const reportOnly = reportOnlyLines.length > 0 ? reportOnlyLines.join(', ') : null;
  const policies = parseCspHeader(lines);
  const flags: CspFlag[] = [];
  policies.forEach((policy, i) => {
    for (const [directive, sources] of Object.entries(policy.directives)) {
      for (const keyword of UNSAFE_KEYWORDS) {
        if (!lower(sources).includes(keyword)) continue;
        const type = directive.startsWith('style') ? 'style' : 'script';
        const neutralized = keyword === "'unsafe-inline'" && !allowsAllInline(sources, type);
        flags.push({ policy: i, directive, keyword, effective: !neutralized });
      }
    }
  });

  if (lines.length === 0 || policies.length === 0) {
    const base = lines.length === 0 ? missing() : { ...missing(), present: true, value: lines.join(', ') };
    const notes = [...base.notes];
    if (lines.length > 0) notes.push('the header holds no directives, so nothing is enforced');
    if (reportOnly)
      notes.push('a Content-Security-Policy-Report-Only policy is sent; it reports but blocks nothing');
    return {
      ...base,
      verdict: lines.length === 0 ? 'missing' : 'bad',
      notes,
      policies,
      unsafe_inline: true,
      unsafe_eval: true,
      flags,
      report_only: reportOnly,
    };
  }

  const notes: string[] = [];
  const scriptLists = policies.flatMap((p) => effective(p, SCRIPT_FALLBACK) ?? []);
  const scriptsUnrestricted = scriptLists.length === 0;
  const unsafeInline = scriptsUnrestricted || scriptLists.every((d) => allowsAllInline(d.sources, 'script'));
  const unsafeEval =
    scriptsUnrestricted || scriptLists.every((d) => lower(d.sources).includes("'unsafe-eval'"));
  const anyHost = !scriptsUnrestricted && scriptLists.every((d) => allowsAnyScriptHost(d.sources));
  let verdict: Verdict = 'good';

  if (scriptsUnrestricted) {
    verdict = 'weak';
    notes.push('no script-src or default-src: scripts are not restricted');
  } else {
    if (unsafeInline) {
      verdict = 'weak';
      notes.push(
        "'unsafe-inline' lets injected inline script run, which defeats most of CSP's XSS protection",
      );
    }
    if (unsafeEval) {
      verdict = 'weak';
      notes.push("'unsafe-eval' lets strings be run as code (eval, new Function, string setTimeout)");
    }
    if (anyHost) {
      verdict = 'weak';
      notes.push('script sources allow any host (*, or a bare scheme such as https:)');
    }
  }
  const styleLists = policies.flatMap((p) => effective(p, STYLE_FALLBACK) ?? []);
  if (styleLists.length > 0 && styleLists.every((d) => allowsAllInline(d.sources, 'style'))) {
    // Style injection is a real but smaller risk (CSS exfiltration); noted, not graded.
    notes.push("styles allow 'unsafe-inline'");
  }
  const objectLists = policies.flatMap((p) => effective(p, OBJECT_FALLBACK) ?? []);
  if (!objectLists.some((d) => lower(d.sources).join(' ') === "'none'")) {
    notes.push("object-src is not 'none' (directly or through default-src): plugin content may load");
  }
  const usesNonces = scriptLists.some((d) => d.sources.some((s) => /^'nonce-/i.test(s)));
  if (usesNonces && !policies.some((p) => p.directives['base-uri'])) {
    notes.push('nonces are used without base-uri, so an injected <base> can redirect relative script URLs');
  }
  if (reportOnly) notes.push('a Content-Security-Policy-Report-Only policy is also sent; it blocks nothing');

  return {
    present: true,
    value: lines.join(', '),
    verdict,
    notes,
    policies,
    unsafe_inline: unsafeInline,
    unsafe_eval: unsafeEval,
    flags,
    report_only: reportOnly,
  };
}

/**
 * frame-ancestors from the enforced policies. It has no default-src fallback
 * (CSP3 §6.4.2), and where a policy carries it browsers ignore
 * X-Frame-Options (HTML, "X-Frame-Options" processing, step 1).
 */
export function evaluateFrameAncestors(policies: readonly CspPolicy[]): HeaderFinding {
  const withDirective = policies.filter((p) => p.directives['frame-ancestors'] !== undefined);
  if (withDirective.length === 0)
    return missing('no frame-ancestors directive in an enforced Content-Security-Policy');
  const value = withDirective
    .map((p) => `frame-ancestors ${(p.directives['frame-ancestors'] ?? []).join(' ')}`.trim())
    .join(', ');
  // Every policy must allow a framing, so one restrictive policy is enough.
  const restrictive = withDirective.some((p) => {
    const s = lower(p.directives['frame-ancestors'] ?? []);
    return s.length === 0 || !s.some((src) => src === '*' || /^[a-z][a-z0-9+.-]*:$/.test(src));
  });
  return restrictive
    ? { present: true, value, verdict: 'good', notes: [] }
    : {
        present: true,
        value,
        verdict: 'weak',
        notes: ['frame-ancestors allows any origin (* or a bare scheme)'],
      };
}
