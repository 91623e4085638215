/**
 * netdiag/client/verdicts: the sentence and the overview each view opens with, in the words of
 * ./words.ts, for the site (src/web/results) and the CLI (src/cli/render) alike: a grade cap that
 * bit or not, one line per mail server, who holds a name, what a visitor of a site gets, a DNSSEC
 * chain of trust as links that hold or break, what a TLS scan found, protocol by protocol. The SPF,
 * mail-server and TLS verdicts are the API's own (`summary`, `verdict`); these are drawn from
 * answers that carry the facts but no sentence. Runs in browsers and in Node, as ./words.ts.
 */
import type { Ok } from './index.js';
import {
  DANE_TONE,
  DNSSEC_STATUS,
  daysUntil,
  expiryText,
  expiryTone,
  formatDate,
  NCSC_CLASS,
  type NcscClass,
  preferenceText,
  protocolText,
  type ScanProtocolName,
  scanGradeTone,
  signatureWindow,
  type Tone,
  zoneText,
} from './words.js';

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

// ---- DNSSEC (/api/dnssec): the verdict, and the chain of trust as links that hold or break

type Dnssec = Ok<'/api/dnssec'>;
type ChainLink = Dnssec['chain'][number];
type DnssecReason = NonNullable<Dnssec['reason']>;
type Signature = ChainLink['signatures'][number];

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The view's opening sentence: the verdict, and for any other than secure the zone and the reason's detail. */
export function dnssecVerdict(data: Dnssec): Verdict {
  const { tone } = DNSSEC_STATUS[data.status];
  const question = `${data.target} ${data.type}`;
  const r = data.reason;
  if (data.status === 'secure') {
    const last = data.chain.at(-1)?.zone ?? '.';
    const denied = data.answer.records.length === 0 && data.answer.denial?.status === 'proven';
    const proof = !denied
      ? ''
      : data.answer.rcode === 'NXDOMAIN'
        ? ', the proof that the name does not exist included'
        : `, the proof that it has no ${data.type} records included`;
    return {
      tone,
      text: `${question} is secure: every link from the trust anchor down to ${last} verified${proof}.`,
    };
  }
  if (r === null) return { tone, text: `${question} is ${data.status}.` };
  if (data.status === 'insecure')
    return {
      tone,
      text: sentence(
        `${question} is insecure: the chain of trust ends at ${r.zone} (${r.code}): ${r.detail}`,
      ),
    };
  if (data.status === 'bogus')
    return {
      tone,
      text: `${sentence(`${question} is bogus: the chain breaks at ${r.zone} (${r.code}): ${r.detail}`)} Validating resolvers answer SERVFAIL.`,
    };
  return { tone, text: sentence(`No verdict for ${question} (${r.code}): ${r.detail}`) };
}

/**
 * Where a zone's chain broke: at the parent (its signature over the DS RRset, or its proof that
 * there is none), between the DS and the keys (no key has the DS's digest), at the keys (none
 * served), or at the key set's signature (expired, not yet valid, not verifying, missing).
 */
export type DnssecStep = 'parent' | 'ds' | 'keys' | 'keyset';

/** A link between two steps of the chain: whether it holds, in a few words. */
export interface ChainMark {
  tone: Tone;
  text: string;
  /** The first broken link of the answer: drawn red, with the reason beside it. */
  broken: boolean;
}

export interface SignatureView {
  signature: Signature;
  window: ReturnType<typeof signatureWindow>;
  /** One of the signatures the broken link is about (its window, or it did not verify). */
  broken: boolean;
}

export interface DnssecZoneView {
  link: ChainLink;
  tone: Tone;
  /** How the zone is reached: the trust anchor, the parent's signed DS, or no DS (unsigned). */
  entry: ChainMark;
  /** The parent's signatures over this zone's DS RRset. */
  dsSignatures: SignatureView[];
  ds: { record: ChainLink['ds'][number]; mark: ChainMark }[];
  /** DS → DNSKEY: whether a key has a DS's digest; null without DS records. */
  dsToKeys: ChainMark | null;
  /** The zone's keys, those the DS names first, then KSKs before ZSKs: the order the links run in. */
  keys: ChainLink['dnskeys'];
  /** DNSKEY → its RRSIG: whether a key the DS names signed the key set; null without keys. */
  keysToSignatures: ChainMark | null;
  /** Over the DNSKEY RRset, in the order of the keys that made them. */
  keysetSignatures: SignatureView[];
  /** This zone is the first broken link: where, and why. */
  broken: { step: DnssecStep; reason: DnssecReason } | null;
}

function brokenStep(link: ChainLink): DnssecStep | null {
  const r = link.reason;
  if (link.status !== 'bogus' || r === null) return null;
  if (r.code === 'no_dnskey_matches_ds' || r.code === 'ds_digest_mismatch') return 'ds';
  // The reason names the parent: its signature over the DS RRset, or its proof of no DS, failed.
  if (r.zone !== link.zone) return 'parent';
  if (link.dnskeys.length === 0) return 'keys';
  return 'keyset';
}

/** The signatures a broken link is about: those outside their window when that is the reason, else all it had to verify. */
function signatureViews(
  signatures: readonly Signature[],
  at: string,
  reason: DnssecReason | null,
  candidates: (s: Signature) => boolean = () => true,
): SignatureView[] {
  return signatures.map((signature) => {
    const window = signatureWindow(signature, at);
    const broken =
      reason === null
        ? false
        : reason.code === 'signature_expired'
          ? window.state === 'expired'
          : reason.code === 'signature_not_yet_valid'
            ? window.state === 'not_yet_valid'
            : candidates(signature);
    return { signature, window, broken };
  });
}

function list(tags: readonly number[]): string {
  return [...new Set(tags)].join(', ');
}

function zoneView(link: ChainLink, parent: string | null, at: string): DnssecZoneView {
  const step = brokenStep(link);
  const reason = link.reason;
  const broken = step !== null && reason !== null ? { step, reason } : null;
  const dsSigs = link.signatures.filter((s) => s.covers === 'DS');
  const keySigs = link.signatures.filter((s) => s.covers === 'DNSKEY');
  const named = new Set(link.dnskeys.filter((k) => k.matched_by_ds).map((k) => k.key_tag));
  const keys = [...link.dnskeys].sort(
    (a, b) => Number(b.matched_by_ds) - Number(a.matched_by_ds) || a.role.localeCompare(b.role),
  );
  // A signature by a key the zone does not serve goes last.
  const rank = (tag: number) => {
    const i = keys.findIndex((k) => k.key_tag === tag);
    return i < 0 ? keys.length : i;
  };

  let entry: ChainMark;
  if (step === 'parent' && reason)
    entry = { tone: 'bad', text: `${reason.zone}: ${reason.code}`, broken: true };
  else if (link.anchored) entry = { tone: 'ok', text: 'the trust anchor names its key', broken: false };
  else if (link.ds.length > 0) {
    const signer = zoneText(dsSigs[0]?.signer ?? parent ?? 'the parent');
    entry = {
      tone: 'ok',
      text: `DS at ${signer}${dsSigs.length ? `, signed by its key ${list(dsSigs.map((s) => s.key_tag))}` : ''}`,
      broken: false,
    };
  } else if (link.status === 'insecure')
    entry = {
      tone: 'muted',
      text: `no DS at ${zoneText(parent ?? 'the parent')}: ${reason?.code ?? 'unsigned'}`,
      broken: false,
    };
  else entry = { tone: DNSSEC_STATUS[link.status].tone, text: reason?.code ?? link.status, broken: false };

  const ds = link.ds.map((record) => {
    const mark: ChainMark = !record.supported
      ? { tone: 'muted', text: 'not supported by this validator', broken: false }
      : record.matches_key
        ? { tone: 'ok', text: `matches key ${record.key_tag}`, broken: false }
        : step === 'ds'
          ? {
              tone: 'bad',
              text:
                reason?.code === 'ds_digest_mismatch'
                  ? `key ${record.key_tag}'s digest differs`
                  : 'no key served matches',
              broken: true,
            }
          : { tone: 'muted', text: 'no key served matches', broken: false };
    return { record, mark };
  });

  let dsToKeys: ChainMark | null = null;
  if (step === 'ds' && reason) dsToKeys = { tone: 'bad', text: reason.code, broken: true };
  else if (link.ds.some((d) => d.matches_key && d.supported))
    dsToKeys = {
      tone: 'ok',
      text: `names key ${list(link.ds.filter((d) => d.matches_key).map((d) => d.key_tag))}`,
      broken: false,
    };
  else if (link.ds.length > 0)
    dsToKeys = { tone: 'muted', text: reason?.code ?? 'no key matches', broken: false };

  let keysToSignatures: ChainMark | null = null;
  const signer = link.dnskeys.find((k) => k.signs_keyset);
  if (step === 'keys' && reason) keysToSignatures = { tone: 'bad', text: reason.code, broken: true };
  else if (step === 'keyset' && reason) keysToSignatures = { tone: 'bad', text: reason.code, broken: true };
  else if (signer)
    keysToSignatures = { tone: 'ok', text: `key ${signer.key_tag} signed the key set`, broken: false };
  else if (link.dnskeys.length > 0)
    keysToSignatures = { tone: DNSSEC_STATUS[link.status].tone, text: 'not verified', broken: false };

  return {
    link,
    tone: DNSSEC_STATUS[link.status].tone,
    entry,
    dsSignatures: signatureViews(dsSigs, at, step === 'parent' ? reason : null),
    ds,
    dsToKeys,
    keysToSignatures,
    keys,
    keysetSignatures: signatureViews(keySigs, at, step === 'keyset' ? reason : null, (s) =>
      named.size === 0 ? true : named.has(s.key_tag),
    ).sort((a, b) => rank(a.signature.key_tag) - rank(b.signature.key_tag)),
    broken,
  };
}

/** The chain from the trust anchor down, zone by zone, each with its links and the one that broke. */
export function dnssecChain(data: Dnssec): DnssecZoneView[] {
  return data.chain.map((link, i) =>
    zoneView(link, i > 0 ? (data.chain[i - 1]?.zone ?? null) : null, data.checked_at),
  );
}

export interface DnssecAnswerView {
  tone: Tone;
  /** The first broken link is in the answer itself (its RRSIG, or its denial), not in the chain. */
  broken: DnssecReason | null;
  signatures: SignatureView[];
}

export function dnssecAnswer(data: Dnssec): DnssecAnswerView {
  const inChain = data.chain.some((l) => l.status === 'bogus');
  const broken = data.status === 'bogus' && !inChain ? data.reason : null;
  return {
    tone: DNSSEC_STATUS[data.status].tone,
    broken,
    signatures: signatureViews(data.answer.signatures, data.checked_at, broken),
  };
}

// ---- TLS configuration scan (/api/tls-scan): the verdict, and what each protocol accepts

type TlsScanPart = Ok<'/api/tls-scan'>['scan'];
type TlsScan = Extract<TlsScanPart, { status: 'ok' }>;

/** The scan's one sentence (page, terminal, agents): grade, Mozilla level met, NCSC-NL class; or why none. */
export function tlsScanVerdict(scan: TlsScanPart): Verdict {
  const where = `${scan.target} (${scan.service === 'smtp' ? 'SMTP with STARTTLS' : 'HTTPS'})`;
  if (scan.status === 'error')
    return { tone: 'bad', text: sentence(`${where} could not be scanned: ${scan.error} (at ${scan.stage})`) };
  const { mozilla, ncsc } = scan.ratings;
  const grade = scan.grade === 'T' ? 'T (the certificate is not trusted)' : scan.grade;
  const meets = mozilla.meets ? `Mozilla's ${mozilla.meets} configuration` : 'no Mozilla configuration';
  const early = scan.complete ? '' : ' The scan ended early: see the notes.';
  return {
    tone: scanGradeTone(scan.grade),
    text: `${where} is graded ${grade}: it meets ${meets}, and the NCSC-NL guidelines rate it ${NCSC_CLASS[ncsc.overall].label}.${early}`,
  };
}

export interface ScanProtocolView {
  name: ScanProtocolName;
  text: string;
  offered: boolean;
  /** Its NCSC-NL class where the ratings give one, and the tone it is drawn in. */
  ncsc: NcscClass | null;
  tone: Tone;
  /** Whose order picks the suite (null when not offered); its suites, in the server's order where it has one. */
  preference: string | null;
  suites: TlsScan['cipher_suites'];
}

/** Newest first, as the suites are grouped: one entry per protocol tested. */
export function scanProtocols(scan: TlsScan): ScanProtocolView[] {
  return [...scan.protocols].reverse().map(({ name, offered }) => {
    const ncsc = scan.ratings.ncsc.protocols.find((p) => p.name === name)?.class ?? null;
    return {
      name,
      text: protocolText(name),
      offered,
      ncsc,
      tone: !offered ? 'muted' : ncsc ? NCSC_CLASS[ncsc].tone : 'info',
      preference: offered
        ? preferenceText(scan.server_preference[name], scan.chacha20_preference[name])
        : null,
      suites: scan.cipher_suites.filter((s) => s.protocol === name),
    };
  });
}
