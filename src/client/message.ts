/**
 * netdiag/client/message: the words a message analysis (POST /api/message) is drawn in, for the
 * site (src/web/results/message.tsx), the CLI (src/cli/render/message.ts) and /mcp alike. The
 * verdict sentence, DMARC's summary and each signature's reason are the API's own; what is here
 * is what the answer carries as facts only: the tone of each result, one card per method with
 * one line of why, and the hops with their delays (which ones stand out). Runs in browsers and in
 * Node, as ./words.ts; kept apart from ./verdicts.ts, which is full.
 */
import type { Ok } from './index.js';
import { formatSeconds, plural, SPF_RESULT_TONE, spfMeaning, type Tone } from './words.js';

export type MessageAnalysis = Ok<'/api/message', 'post'>;
type AuthResult = MessageAnalysis['dkim'][number]['result'];
type Hop = MessageAnalysis['received'][number];

export const MESSAGE_STATUS: Record<MessageAnalysis['verdict']['status'], { tone: Tone; label: string }> = {
  authenticated: { tone: 'ok', label: 'Authenticated' },
  not_authenticated: { tone: 'bad', label: 'Not authenticated' },
  unknown: { tone: 'warn', label: 'Unknown' },
};

/** RFC 8601's results, DKIM's and ARC's alike: only pass is good news, none is absence. */
export const AUTH_RESULT_TONE: Record<AuthResult, Tone> = {
  pass: 'ok',
  fail: 'bad',
  neutral: 'warn',
  policy: 'warn',
  temperror: 'error',
  permerror: 'bad',
  none: 'muted',
};

export const DMARC_RESULT_TONE: Record<MessageAnalysis['dmarc']['result'], Tone> = {
  pass: 'ok',
  fail: 'bad',
  none: 'muted',
  temperror: 'error',
  permerror: 'bad',
};

export const MESSAGE_FINDING_TONE: Record<MessageAnalysis['findings'][number]['severity'], Tone> = {
  critical: 'bad',
  high: 'bad',
  medium: 'warn',
  low: 'info',
  info: 'muted',
};

/** The message's verdict as the views' Verdict: the API's sentence, in its status's tone. */
export function messageVerdict(a: Pick<MessageAnalysis, 'verdict'>): { tone: Tone; text: string } {
  return { tone: MESSAGE_STATUS[a.verdict.status].tone, text: a.verdict.summary };
}

export interface MethodCard {
  method: 'DKIM' | 'ARC' | 'SPF' | 'DMARC';
  /** The result as a receiver writes it (pass, fail, …). */
  result: string;
  tone: Tone;
  /** One line of why. */
  why: string;
}

function signer(s: MessageAnalysis['dkim'][number]): string {
  return `${s.domain ?? '(no d=)'}${s.selector ? ` (s=${s.selector})` : ''}`;
}

/**
 * DKIM as one result: pass when a signature passes (an aligned one first, as DMARC reads them),
 * else the first signature's result, the one a receiver would report first.
 */
function dkimCard(a: MessageAnalysis): MethodCard {
  if (a.dkim.length === 0)
    return { method: 'DKIM', result: 'none', tone: 'muted', why: 'The message carries no DKIM-Signature.' };
  const passing = a.dkim.filter((s) => s.result === 'pass');
  const best = passing.find((s) => s.aligned) ?? passing[0];
  const others = a.dkim.length - 1;
  const more = others > 0 ? ` (${plural(others, 'other signature')} too)` : '';
  if (best) {
    const aligned =
      best.aligned === true ? ', aligned with From' : best.aligned === false ? ', not aligned with From' : '';
    return {
      method: 'DKIM',
      result: 'pass',
      tone: 'ok',
      why: `Signed by ${signer(best)}${aligned}${more}.`,
    };
  }
  const first = a.dkim[0]!;
  return {
    method: 'DKIM',
    result: first.result,
    tone: AUTH_RESULT_TONE[first.result],
    why: `${signer(first)}: ${first.reason ?? 'the signature does not verify'}${more}.`,
  };
}

function arcCard(a: MessageAnalysis): MethodCard {
  const { arc } = a;
  const why =
    arc.result === 'none'
      ? 'No ARC sets: the message was not sealed on the way.'
      : arc.result === 'pass'
        ? `${plural(arc.instances, 'instance')}, the chain validates.`
        : `${arc.broken_at !== null ? `Broken at instance ${arc.broken_at}: ` : ''}${arc.reason ?? 'the chain does not validate'}.`;
  return { method: 'ARC', result: arc.result, tone: AUTH_RESULT_TONE[arc.result], why };
}

function spfCard(a: MessageAnalysis): MethodCard {
  if (!a.spf) return { method: 'SPF', result: 'not checked', tone: 'muted', why: a.envelope.why };
  return {
    method: 'SPF',
    result: a.spf.result,
    tone: SPF_RESULT_TONE[a.spf.result],
    why: spfMeaning(a.spf),
  };
}

function dmarcCard(a: MessageAnalysis): MethodCard {
  return {
    method: 'DMARC',
    result: a.dmarc.result,
    tone: DMARC_RESULT_TONE[a.dmarc.result],
    why: a.dmarc.summary,
  };
}

/** The four cards under the verdict, in the order a receiver decides: DKIM, ARC, SPF, DMARC. */
export function methodCards(a: MessageAnalysis): MethodCard[] {
  return [dkimCard(a), arcCard(a), spfCard(a), dmarcCard(a)];
}

/** A hop's delay in words: "3 s", "2 min"; a negative one is a clock that disagrees. */
export function delayText(seconds: number | null): string | null {
  if (seconds === null) return null;
  if (seconds < 0) return `${formatSeconds(-seconds)} earlier (clocks disagree)`;
  return formatSeconds(seconds);
}

export interface HopView {
  hop: Hop;
  /** Its delay in words, or null without both times. */
  delay: string | null;
  /**
   * Among the largest delays of the path: the longest one, and any other within half of it, when
   * it is a minute or more (a path of seconds has no delay worth pointing at).
   */
  slow: boolean;
}

export const SLOW_HOP_SECONDS = 60;

/** The hops top (newest) first, as the headers stand, each with its delay and whether it stands out. */
export function hopViews(received: readonly Hop[]): HopView[] {
  const longest = Math.max(0, ...received.map((h) => h.delay_seconds ?? 0));
  return received.map((hop) => {
    const d = hop.delay_seconds;
    return {
      hop,
      delay: delayText(d),
      slow: d !== null && longest >= SLOW_HOP_SECONDS && d >= longest / 2,
    };
  });
}

/** A hop's TLS in words: "TLSv1.3 TLS_AES_256_GCM_SHA384", or null where the header says nothing. */
export function hopTlsText(hop: Hop): string | null {
  if (!hop.tls) return null;
  return [hop.tls.version, hop.tls.cipher].filter(Boolean).join(' ') || 'TLS';
}

/** The trusted headers that disagree with netdiag, counted: what the Authentication-Results section leads with. */
export function authResultsOverview(headers: MessageAnalysis['authentication_results']): string {
  if (headers.length === 0) return 'The message carries no Authentication-Results header.';
  const trusted = headers.filter((h) => h.trusted).length;
  const disagreeing = headers.filter((h) => h.disagreements.length > 0).length;
  const untrusted = headers.length - trusted;
  return [
    `${plural(headers.length, 'header')}: ${trusted} trusted${untrusted ? `, ${untrusted} not (they may be forged)` : ''}.`,
    disagreeing
      ? `${plural(disagreeing, 'trusted header disagrees', 'trusted headers disagree')} with netdiag’s own verdicts.`
      : trusted
        ? 'The trusted ones agree with netdiag’s own verdicts.'
        : '',
  ]
    .filter(Boolean)
    .join(' ');
}
