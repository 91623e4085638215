/**
 * netdiag/client/words: how a netdiag answer is said to people, in one place for the site
 * (src/web/results) and the CLI (src/cli/render): check and header names, the word and colour
 * (tone) of every status, the meaning of an SPF result, dates and durations. A word changed
 * here changes on the page and on the terminal alike.
 *
 * Typed against the generated contract (openapi.gen.d.ts through ./index.ts), so a status the
 * API gains and no table names fails the type check. Runs in browsers and in Node: no DOM, no
 * Preact, no Node modules (src/client/tsconfig.json compiles it without their types).
 *
 * Why one file: it is the one vocabulary (the package export netdiag/client/words); a word is
 * looked for, and kept consistent with its neighbours, where every other word is.
 */
import type { Ok } from './index.js';

/**
 * The colours a verdict is shown in: the site's badge-<tone> classes and CSS variables
 * (styles.css), the CLI's ANSI colours (src/cli/style.ts). `error` is an evaluation that
 * could not finish (SPF's temperror and permerror, an unreachable mail server), apart from `bad`.
 */
export type Tone = 'ok' | 'warn' | 'bad' | 'error' | 'info' | 'muted';

// ---- dates, durations, counts

/** The instant of an ISO string or a Date; NaN when it is not one. */
function instant(at: string | Date): number {
  return typeof at === 'string' ? Date.parse(at) : at.getTime();
}

/** YYYY-MM-DD (UTC): unambiguous wherever it is read. */
export function formatDate(at: string | Date | null | undefined): string {
  if (!at) return '—';
  const t = instant(at);
  return Number.isNaN(t) ? String(at) : new Date(t).toISOString().slice(0, 10);
}

/**
 * YYYY-MM-DD HH:MM UTC: the one form of a date with a time, on the page, on the terminal and in
 * the API's own sentences (findings, verdicts); the fields keep RFC 3339 for programs.
 */
export function formatDateTime(at: string | Date | null | undefined): string {
  if (!at) return '—';
  const t = instant(at);
  return Number.isNaN(t) ? String(at) : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Whole days from now to `iso` (negative when past), or null when it is not a date. */
export function daysUntil(iso: string | null | undefined, now = Date.now()): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : Math.floor((t - now) / 86_400_000);
}

/** "in 3 months", "2 years ago". */
export function relativeDays(days: number): string {
  if (days === 0) return 'today';
  const n = Math.abs(days);
  const span =
    n >= 730
      ? `${Math.floor(n / 365)} years`
      : n >= 60
        ? `${Math.floor(n / 30)} months`
        : `${n} day${n === 1 ? '' : 's'}`;
  return days > 0 ? `in ${span}` : `${span} ago`;
}

/** A TTL or an interval: "45 s", "5 min", "1.5 h", "2 d". */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10} h`;
  return `${Math.round(seconds / 8640) / 10} d`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

export function yesNo(value: boolean | null | undefined): string | null {
  return value === null || value === undefined ? null : value ? 'yes' : 'no';
}

/** A registration's expiry: red once past, amber within a month. */
export function expiryTone(days: number): Tone {
  return days < 0 ? 'bad' : days < 30 ? 'warn' : 'ok';
}

export function expiryText(days: number): string {
  return days < 0 ? `expired ${relativeDays(days)}` : `expires ${relativeDays(days)}`;
}

// ---- where an answer came from (every lookup's providers_tried)

type AttemptStatus = Ok<'/api/dns'>['providers_tried'][number]['status'];

/** How each outcome of one provider attempt is shown: it answered, had nothing for this, or failed. */
export const PROVIDER_ATTEMPT: Record<AttemptStatus, { tone: Tone; label: string; mark: string }> = {
  ok: { tone: 'ok', label: 'answered', mark: '✓' },
  no_data: { tone: 'muted', label: 'no data', mark: '–' },
  failed: { tone: 'bad', label: 'failed', mark: '✕' },
};

// ---- email security (/api/email-security)

type Email = Ok<'/api/email-security'>;
type EmailCheck = Email['checks'][number];
type MailFinding = Email['checks'][number]['findings'][number];

export const EMAIL_CHECK_NAMES: Record<EmailCheck['id'], string> = {
  mx: 'MX',
  spf: 'SPF',
  dmarc: 'DMARC',
  dkim: 'DKIM',
  mta_sts: 'MTA-STS',
  tls_rpt: 'TLS-RPT',
  bimi: 'BIMI',
  dnssec: 'DNSSEC / DANE',
};

export const EMAIL_CHECK_STATUS: Record<EmailCheck['status'], { tone: Tone; label: string; icon: string }> = {
  pass: { tone: 'ok', label: 'Pass', icon: '✓' },
  warn: { tone: 'warn', label: 'Warning', icon: '!' },
  fail: { tone: 'bad', label: 'Fail', icon: '✕' },
  info: { tone: 'info', label: 'Info', icon: 'i' },
  error: { tone: 'bad', label: 'Lookup failed', icon: '?' },
  not_applicable: { tone: 'muted', label: 'Not applicable', icon: '–' },
};

export const EMAIL_GRADE_TONE: Record<Email['grade'], Tone> = {
  A: 'ok',
  B: 'ok',
  C: 'warn',
  D: 'bad',
  F: 'bad',
};

export const RECOMMENDATION_PRIORITY_TONE: Record<Email['recommendations'][number]['priority'], Tone> = {
  high: 'bad',
  medium: 'warn',
  low: 'info',
};

/** A finding's severity, in the email grade's checks and the mail servers' hosts alike. */
export const MAIL_FINDING_TONE: Record<MailFinding['severity'], Tone> = {
  error: 'bad',
  warning: 'warn',
  info: 'info',
};

// ---- mail servers (/api/mail-tls)

type MailTls = Ok<'/api/mail-tls'>;
type MailTlsDane = NonNullable<MailTls['hosts'][number]['dane']>;

/** A status's word and colour (the site's banner colours are styles.css .mail-<status>, the same). */
export const MAIL_TLS_STATUS: Record<MailTls['status'], { tone: Tone; label: string }> = {
  pass: { tone: 'ok', label: 'pass' },
  warn: { tone: 'warn', label: 'warn' },
  fail: { tone: 'bad', label: 'fail' },
  unreachable: { tone: 'error', label: 'unreachable' },
  refused: { tone: 'info', label: 'refused' },
  no_mail: { tone: 'muted', label: 'no mail' },
};

/** Only `valid` authenticates; `mismatch`, `bogus` and `error` stop DANE senders; the rest are weaknesses or absence. */
export const DANE_TONE: Record<MailTlsDane['verdict'], Tone> = {
  valid: 'ok',
  mismatch: 'bad',
  unusable: 'warn',
  unchecked: 'muted',
  insecure: 'warn',
  bogus: 'bad',
  indeterminate: 'muted',
  none: 'muted',
  error: 'bad',
};

export const DANE_RECORD_TONE: Record<MailTlsDane['records'][number]['result'], Tone> = {
  match: 'ok',
  mismatch: 'bad',
  unusable: 'warn',
  unchecked: 'muted',
};

export const MX_STATE: Record<Exclude<MailTls['mx']['state'], 'present'>, string> = {
  implicit: 'none published: the domain itself is the mail host (RFC 5321 §5.1)',
  null_mx: 'null MX: the domain accepts no mail (RFC 7505)',
  nxdomain: 'the domain does not exist',
  no_address: 'neither an MX nor an address',
};

// ---- SPF (/api/spf)

type Spf = Ok<'/api/spf'>;

/** One colour per RFC 7208 §2.6 result (the site's styles.css .spf-<result>, the same). */
export const SPF_RESULT_TONE: Record<Spf['result'], Tone> = {
  pass: 'ok',
  fail: 'bad',
  softfail: 'warn',
  neutral: 'warn',
  none: 'muted',
  temperror: 'error',
  permerror: 'error',
};

/** What the result tells a receiver, in RFC 7208's words (§2.6, §8). */
export function spfMeaning(
  data: Pick<Spf, 'ip' | 'domain' | 'identity' | 'helo' | 'sender' | 'result'>,
): string {
  const { ip, domain } = data;
  const who = data.identity === 'helo' ? `the HELO name ${data.helo ?? domain}` : data.sender;
  const texts: Record<Spf['result'], string> = {
    pass: `${ip} is authorized to send mail as ${who}.`,
    fail: `${ip} is not authorized to send mail as ${who}: ${domain} asks receivers to reject it.`,
    softfail: `${ip} is probably not authorized to send mail as ${who}: ${domain} asks receivers to accept it but treat it with suspicion.`,
    neutral: `${domain} says nothing about whether ${ip} may send mail as ${who}.`,
    none: `No SPF policy applies: ${domain} publishes no SPF record.`,
    temperror: `A transient DNS error stopped the check: a receiver would defer the mail, and a later try may pass.`,
    permerror: `${domain}'s SPF policy cannot be interpreted: it needs fixing by hand (the problem says where).`,
  };
  return texts[data.result];
}

/** A match is not good news in itself (`-all` matches too): the result steps carry the colours. */
export const SPF_OUTCOME: Record<
  NonNullable<Spf['trace'][number]['outcome']>,
  { tone: Tone; label: string }
> = {
  match: { tone: 'info', label: 'match' },
  no_match: { tone: 'muted', label: 'no match' },
  error: { tone: 'bad', label: '✕ error' },
  not_reached: { tone: 'muted', label: 'not reached' },
};

// ---- TLS (/api/tls; /api/inspect and /api/mail-tls embed the same evidence)

/** The evidence of one handshake (/api/tls's `tls` when it has some; each mail server's). */
type TlsEvidence = Omit<Extract<Ok<'/api/tls'>['tls'], { status: 'ok' }>, 'status'>;
type TlsKey = TlsEvidence['leaf']['key'];

export const TLS_FINDING_TONE: Record<TlsEvidence['findings'][number]['severity'], Tone> = {
  critical: 'bad',
  high: 'bad',
  medium: 'warn',
  low: 'info',
};

/** "CN=example.com, O=Example" → "example.com": the name people recognise. */
export function commonName(dn: string): string {
  return /(?:^|,\s*)CN=([^,]+)/.exec(dn)?.[1] ?? dn;
}

/** The verdict's word and colour (styles.css .tls-verdict.tone-<tone>). */
export const TLS_VERDICT: Record<TlsEvidence['verdict']['status'], { tone: Tone; label: string }> = {
  trusted: { tone: 'ok', label: 'trusted' },
  trusted_with_warnings: { tone: 'warn', label: 'trusted, fix soon' },
  rejected: { tone: 'bad', label: 'rejected' },
};

/**
 * The leaf's days remaining: red within two weeks, amber within a month. Not green for a
 * certificate clients reject: its days are then no comfort, so they are shown without a colour.
 */
export function certificateDaysTone(days: number, verdict?: TlsEvidence['verdict']['status']): Tone {
  if (days >= 0 && verdict === 'rejected') return 'muted';
  if (days < 14) return 'bad';
  if (days < 30) return 'warn';
  return 'ok';
}

export function certificateDaysLabel(days: number): string {
  return days < 0 ? 'days since expiry' : 'days remaining';
}

/** "RSA 2048 bits", "EC prime256v1". */
export function keyText(key: Pick<TlsKey, 'type' | 'bits' | 'curve'>): string {
  return [key.type, key.bits ? `${key.bits} bits` : key.curve].filter(Boolean).join(' ');
}

export function keyExchangeText(ephemeral: TlsEvidence['connection']['ephemeral_key']): string {
  return ephemeral
    ? `${ephemeral.type} ${ephemeral.curve ?? ''}${ephemeral.bits ? ` ${ephemeral.bits} bits` : ''}`
    : 'not ephemeral';
}

/** A chain certificate's key, short: "RSA 2048", "EC prime256v1". */
export function chainKeyText(key: Pick<TlsKey, 'type' | 'bits' | 'curve'>): string {
  return `${key.type}${key.bits ? ` ${key.bits}` : key.curve ? ` ${key.curve}` : ''}`;
}

export function chainTitle(chain: Pick<TlsEvidence['chain'], 'source'>): string {
  return chain.source === 'handshake' ? 'Chain as sent by the server' : 'Chain (reconstructed)';
}

export function chainRootText(root: NonNullable<TlsEvidence['chain']['root']>): string {
  return `Root: ${commonName(root.subject)} (${root.source === 'sent' ? 'sent by the server' : 'from the trust store'})`;
}

// ---- HTTP and security headers (/api/inspect)

type Headers = Ok<'/api/inspect'>['security_headers'];

/** The header each graded field stands for, in the order both show them. */
export const SECURITY_HEADER_NAMES = {
  strict_transport_security: 'Strict-Transport-Security',
  content_security_policy: 'Content-Security-Policy',
  frame_ancestors: 'CSP frame-ancestors',
  x_frame_options: 'X-Frame-Options',
  x_content_type_options: 'X-Content-Type-Options',
  referrer_policy: 'Referrer-Policy',
  permissions_policy: 'Permissions-Policy',
  cross_origin_opener_policy: 'Cross-Origin-Opener-Policy',
  cross_origin_resource_policy: 'Cross-Origin-Resource-Policy',
  cross_origin_embedder_policy: 'Cross-Origin-Embedder-Policy',
} as const satisfies Partial<Record<keyof Headers, string>>;

export type HeaderVerdict = NonNullable<Headers[keyof typeof SECURITY_HEADER_NAMES]>['verdict'];

export const HEADER_VERDICT_TONE: Record<HeaderVerdict, Tone> = {
  good: 'ok',
  weak: 'warn',
  bad: 'bad',
  missing: 'muted',
};

/** A security-header grade: A+ and A green, B and C amber, the rest red; none muted. */
export function headerGradeTone(grade: string | undefined): Tone {
  if (!grade) return 'muted';
  if (grade.startsWith('A')) return 'ok';
  if (grade === 'B' || grade === 'C') return 'warn';
  return 'bad';
}

export function httpStatusTone(status: number): Tone {
  if (status < 300) return 'ok';
  if (status < 400) return 'info';
  return 'bad';
}

// ---- the other lookups' statuses

type GlobalDnsStatus = Ok<'/api/global-dns', 'post'>['results'][number]['status'];

export const GLOBAL_DNS_STATUS: Record<GlobalDnsStatus, { tone: Tone; label: string }> = {
  finished: { tone: 'ok', label: 'answered' },
  failed: { tone: 'bad', label: 'failed' },
  timeout: { tone: 'warn', label: 'timed out' },
  no_probe: { tone: 'muted', label: 'no probe' },
};

type SubdomainStatus = Ok<'/api/subdomains'>['hosts'][number]['status'];

export const SUBDOMAIN_STATUS: Record<SubdomainStatus, { tone: Tone; label: string; help: string }> = {
  active: { tone: 'ok', label: 'active', help: 'answers with its own A/AAAA or CNAME record now' },
  wildcard: {
    tone: 'info',
    label: 'wildcard',
    help: "answers only with what the domain's DNS wildcard gives any name",
  },
  historical: { tone: 'muted', label: 'historical', help: 'seen in certificates, no DNS answer now' },
  lookup_failed: { tone: 'bad', label: 'lookup failed', help: 'every resolver failed for this name' },
  unchecked: { tone: 'muted', label: 'unchecked', help: 'not resolved: only the 50 most recent names are' },
};

/** Coordinates from the geolocation database, which are a region's, never an address's. */
export function coordinatesText(place: { latitude: number | null; longitude: number | null }): string | null {
  return place.latitude !== null && place.longitude !== null
    ? `${place.latitude}, ${place.longitude} (approximate)`
    : null;
}

// ---- DNSSEC (/api/dnssec)

type Dnssec = Ok<'/api/dnssec'>;
type DnssecDenial = NonNullable<Dnssec['answer']['denial']>;

/**
 * A verdict's word and colour. Insecure is grey, not amber: an unsigned zone is most of the DNS,
 * and nothing a resolver refuses. Indeterminate is the colour of an evaluation that could not finish.
 */
export const DNSSEC_STATUS: Record<Dnssec['status'], { tone: Tone; label: string }> = {
  secure: { tone: 'ok', label: 'secure' },
  insecure: { tone: 'muted', label: 'insecure' },
  bogus: { tone: 'bad', label: 'bogus' },
  indeterminate: { tone: 'error', label: 'indeterminate' },
};

export const DNSSEC_FINDING_TONE: Record<Dnssec['findings'][number]['severity'], Tone> = {
  error: 'bad',
  warning: 'warn',
  info: 'info',
};

/** How a negative answer (or a wildcard's expansion) was proven. */
export const DENIAL_STATUS: Record<DnssecDenial['status'], { tone: Tone; label: string }> = {
  proven: { tone: 'ok', label: 'proven' },
  insecure: { tone: 'muted', label: 'not proven (insecure)' },
  failed: { tone: 'bad', label: 'proof failed' },
};

/** DS digest types by number (RFC 4034, 4509, 6605; 3 is GOST, which no validator here implements). */
const DS_DIGESTS: Readonly<Record<number, string>> = { 1: 'SHA-1', 2: 'SHA-256', 3: 'GOST', 4: 'SHA-384' };

export function dsDigestName(type: number): string {
  return DS_DIGESTS[type] ?? `digest ${type}`;
}

/** The root as people know it; other zones as the API names them. */
export function zoneText(zone: string): string {
  return zone === '.' ? '. (root)' : zone;
}

/** "ECDSAP256SHA256 · 256 bits": a DNSKEY's algorithm and size. */
export function dnskeyText(key: { algorithm_name: string; bits: number | null }): string {
  return key.bits === null ? key.algorithm_name : `${key.algorithm_name} · ${key.bits} bits`;
}

/** An RRSIG's validity window at `at` (the answer's checked_at): its state in words and colour. */
export function signatureWindow(
  sig: { inception: string; expiration: string },
  at: string | Date,
): { state: 'valid' | 'expired' | 'not_yet_valid'; tone: Tone; text: string } {
  const now = instant(at);
  const from = Date.parse(sig.inception);
  const until = Date.parse(sig.expiration);
  if (now < from)
    return { state: 'not_yet_valid', tone: 'bad', text: `not valid until ${formatDateTime(sig.inception)}` };
  if (now > until)
    return {
      state: 'expired',
      tone: 'bad',
      text: `expired ${relativeDays(daysUntil(sig.expiration, now) ?? 0)}`,
    };
  const left = daysUntil(sig.expiration, now) ?? 0;
  return { state: 'valid', tone: left < 7 ? 'warn' : 'ok', text: `valid, expires ${relativeDays(left)}` };
}

/** "2026-11-28 → 2026-12-28": a signature's window, as the chain shows it. */
export function windowText(sig: { inception: string; expiration: string }): string {
  return `${formatDate(sig.inception)} → ${formatDate(sig.expiration)}`;
}

// ---- TLS configuration scan (/api/tls-scan)

type TlsScanOk = Extract<Ok<'/api/tls-scan'>['scan'], { status: 'ok' }>;
export type NcscClass = TlsScanOk['cipher_suites'][number]['ncsc'];
export type ScanProtocolName = TlsScanOk['protocols'][number]['name'];

/** The NCSC-NL classes (as internet.nl shows them): what is to go amber, what must go red. */
export const NCSC_CLASS: Record<NcscClass, { tone: Tone; label: string }> = {
  good: { tone: 'ok', label: 'good' },
  sufficient: { tone: 'info', label: 'sufficient' },
  phase_out: { tone: 'warn', label: 'phase out' },
  insufficient: { tone: 'bad', label: 'insufficient' },
};

/** A scan's grade: A+ and A green, B and C amber, the rest (T: not trusted) red. */
export function scanGradeTone(grade: TlsScanOk['grade']): Tone {
  return grade.startsWith('A') ? 'ok' : grade === 'B' || grade === 'C' ? 'warn' : 'bad';
}

export const SCAN_FINDING_TONE: Record<TlsScanOk['findings'][number]['severity'], Tone> = {
  ...TLS_FINDING_TONE,
  info: 'muted',
};

/** "TLS 1.2", "SSL 3.0": a protocol as people write it (the API's names are OpenSSL's). */
export function protocolText(name: ScanProtocolName): string {
  return { SSLv2: 'SSL 2.0', SSLv3: 'SSL 3.0', TLSv1: 'TLS 1.0' }[name as string] ?? name.replace('v', ' ');
}

/** Whose order picks the suite: the server's (ChaCha20 kept for clients that prefer it), the client's, or unknown. */
export function preferenceText(preference: boolean | null | undefined, chacha: boolean | null | undefined) {
  if (preference === undefined) return null;
  if (preference === null) return 'cannot tell (one suite)';
  if (!preference) return "the client's order";
  return `the server's order${chacha ? ', ChaCha20 for clients that prefer it' : ''}`;
}

/** The scan's TLS features as one row each: name, what was seen, its colour (null: could not be told here). */
export function scanFeatureRows(f: TlsScanOk['features']): { name: string; text: string; tone: Tone }[] {
  const row = (name: string, value: boolean | null, yes: [string, Tone], no: [string, Tone]) => {
    const [text, tone] = value === null ? ['—', 'muted' as Tone] : value ? yes : no;
    return { name, text, tone };
  };
  return [
    row('Secure renegotiation (RFC 5746)', f.secure_renegotiation, ['yes', 'ok'], ['no', 'bad']),
    row('TLS compression', f.compression, ['accepted (CRIME)', 'bad'], ['no', 'ok']),
    row('TLS_FALLBACK_SCSV', f.fallback_scsv, ['honoured', 'ok'], ['not honoured', 'warn']),
    row('Extended master secret', f.extended_master_secret, ['yes', 'ok'], ['no', 'warn']),
    row('Session tickets', f.session_tickets, ['yes', 'info'], ['no', 'muted']),
    f.alpn === null
      ? { name: 'ALPN', text: '—', tone: 'muted' }
      : {
          name: 'ALPN',
          text: f.alpn.length ? f.alpn.join(', ') : 'none',
          tone: f.alpn.length ? 'info' : 'muted',
        },
    row('Heartbeat extension', f.heartbeat, ['advertised', 'warn'], ['no', 'ok']),
  ];
}
