/**
 * netdiag/client/verdicts: the sentence and the overview each view opens with, in the words of
 * ./words.ts, for the site (src/web/results) and the CLI (src/cli/render) alike: a grade cap that
 * bit or not, one line per mail server, who holds a name, what a visitor of a site gets. The SPF,
 * mail-server and TLS verdicts are the API's own (`summary`, `verdict`); these are drawn from
 * answers that carry the facts but no sentence. Runs in browsers and in Node, as ./words.ts.
 */
import type { Ok } from './index.js';
import { DANE_TONE, daysUntil, expiryText, expiryTone, formatDate, type Tone } from './words.js';

type Email = Ok<'/api/email-security'>;
type MailTls = Ok<'/api/mail-tls'>;

/**
 * A grade cap in words. It limits the grade only when the points would have scored above it; a
 * cap that did not bite (a D 45 under a C cap) is still worth knowing, but is not why the grade
 * is what it is, so it is not said as "Capped".
 */
export function capText(
  cap: Email['scoring']['caps'][number],
  uncappedScore: number,
): { tone: Tone; text: string } {
  return uncappedScore > cap.max_score
    ? { tone: 'warn', text: `Capped at ${cap.max_grade}: ${cap.reason}` }
    : {
        tone: 'muted',
        text: `Would be capped at ${cap.max_grade} (the points are below it already): ${cap.reason}`,
      };
}

/** A few words for why a checking sender refuses a certificate, for a one-line overview (the card says it whole). */
const CERTIFICATE_PROBLEM: Readonly<Record<string, string>> = {
  ERR_TLS_CERT_ALTNAME_INVALID: 'wrong name',
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not yet valid',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'untrusted root',
  UNABLE_TO_GET_ISSUER_CERT: 'unknown issuer',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unknown issuer',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unknown issuer',
};

export interface OverviewCell {
  tone: Tone;
  text: string;
  /** The longer story, where the text is short for it (a tooltip on the page). */
  detail?: string;
}

/** One line per MX host (issue 31): STARTTLS, certificate, DANE and MTA-STS at a glance, above the cards. */
export interface MailHostOverview {
  starttls: OverviewCell;
  certificate: OverviewCell;
  dane: OverviewCell;
  mta_sts: OverviewCell;
}

type MailTlsHost = MailTls['hosts'][number];

export function mailHostOverview(host: MailTlsHost): MailHostOverview {
  const contacted = host.addresses.filter((a) => a.status !== 'refused');
  const reached = contacted.filter((a) => a.status !== 'unreachable');
  const none = { tone: 'muted' as const, text: '—' };
  const partly =
    reached.length < contacted.length ? ` (${reached.length} of ${contacted.length} addresses)` : '';
  let starttls: OverviewCell;
  if (host.addresses.length === 0) starttls = { tone: 'bad', text: 'no address' };
  else if (contacted.length === 0) starttls = { tone: 'info', text: 'not contacted' };
  else if (reached.length === 0) starttls = { tone: 'error', text: 'unreachable' };
  else {
    const offered = reached.filter((a) => a.smtp?.starttls_offered).length;
    starttls =
      offered === reached.length
        ? { tone: partly ? 'warn' : 'ok', text: `offered${partly}` }
        : offered === 0
          ? { tone: 'bad', text: 'not offered' }
          : { tone: 'bad', text: `offered by ${offered} of ${reached.length} addresses` };
  }
  const evidence = reached.flatMap((a) => (a.tls ? [a.tls] : []));
  const refused = evidence.find((t) => !t.connection.authorized || !t.connection.hostname_matches);
  const certificate: OverviewCell =
    evidence.length === 0
      ? none
      : refused
        ? {
            tone: 'warn',
            text: CERTIFICATE_PROBLEM[refused.connection.authorization_error ?? ''] ?? 'not trusted',
            detail: refused.verdict.summary,
          }
        : { tone: 'ok', text: 'trusted', detail: evidence[0]?.verdict.summary };
  const dane: OverviewCell = host.dane
    ? { tone: DANE_TONE[host.dane.verdict], text: host.dane.verdict, detail: host.dane.summary }
    : none;
  const sts = host.mta_sts;
  const mta_sts: OverviewCell =
    !sts.mode || sts.mode === 'none'
      ? { tone: 'muted', text: 'no policy' }
      : sts.matches_policy
        ? { tone: 'ok', text: `in the policy (${sts.mode})` }
        : { tone: sts.mode === 'enforce' ? 'bad' : 'warn', text: `not in the policy (${sts.mode})` };
  return { starttls, certificate, dane, mta_sts };
}

// ---- one-sentence verdicts the views open with (the SPF, mail servers and TLS ones are the API's own)

export interface Verdict {
  tone: Tone;
  text: string;
}

type Rdap = Ok<'/api/rdap'>;

/** Who holds the name or the network, and for how long: what a registration lookup is asked for. */
export function rdapVerdict(data: Rdap, now = Date.now()): Verdict {
  const r = data.registry;
  if (r === null) return { tone: 'muted', text: `No registration data for ${data.target}.` };
  const registrar = r.entities.registrar?.name;
  const since = r.events.registration ? ` since ${formatDate(r.events.registration)}` : '';
  if ('nameservers' in r) {
    const days = daysUntil(r.events.expiration, now);
    const through = registrar ? ` through ${registrar}` : '';
    if (days === null) return { tone: 'ok', text: `${data.target} is registered${through}${since}.` };
    return {
      tone: expiryTone(days),
      text: `${data.target} is registered${through}${since}; it ${expiryText(days)} (${formatDate(r.events.expiration)}).`,
    };
  }
  const range = r.cidrs.length ? ` (${r.cidrs.join(', ')})` : '';
  const holder = r.entities.registrant?.organization ?? r.entities.registrant?.name;
  return {
    tone: 'info',
    text: `${data.target} is in ${r.name ?? 'a network'}${range}${holder ? `, held by ${holder}` : ''}${since}.`,
  };
}

type Inspect = Ok<'/api/inspect'>;

/** What a visitor gets: an answer over HTTPS a browser accepts, or the first thing in the way. */
export function inspectVerdict(data: Inspect): Verdict {
  const { http, tls } = data;
  const final = http.final;
  if (http.status === 'error' || !final)
    return { tone: 'bad', text: `No HTTP answer: ${http.error ?? 'none'}.` };
  const answers = `${final.url} answers ${final.status}`;
  if (tls?.status === 'ok' && tls.verdict.status === 'rejected')
    return { tone: 'bad', text: `${answers}, but ${tls.verdict.summary.replace(/^Browsers/, 'browsers')}` };
  if (tls?.status === 'error') return { tone: 'bad', text: `${answers}, but HTTPS fails: ${tls.error}.` };
  if (final.status >= 400) return { tone: 'warn', text: `${answers}: an error page.` };
  if (http.redirects_to_https === false)
    return { tone: 'warn', text: `${answers}, but plain HTTP is not redirected to HTTPS.` };
  const grade = data.security_headers.grade ? `; security headers grade ${data.security_headers.grade}` : '';
  const secure =
    final.url.startsWith('https:') && tls?.status === 'ok' ? ' over HTTPS with a trusted certificate' : '';
  return { tone: 'ok', text: `${answers}${secure}${grade}.` };
}
