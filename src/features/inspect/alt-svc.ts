/**
 * Alt-Svc (RFC 7838 §3), the only evidence of HTTP/3 the inspector reports:
 * it never speaks QUIC, so HTTP/3 is "advertised", not "verified".
 *
 *   Alt-Svc       = clear / 1#alt-value
 *   alt-value     = alternative *( OWS ";" OWS parameter )
 *   alternative   = protocol-id "=" alt-authority      ; protocol-id: percent-encoded ALPN id
 *   alt-authority = quoted-string                      ; [ uri-host ] ":" port
 *   parameter     = token "=" ( token / quoted-string ) ; ma (default 86400 s), persist
 */
import { isToken, splitOutsideQuotes, unquote } from './header-syntax.js';

export interface AltService {
  /** ALPN protocol id, percent-decoded: "h3", "h3-29", "h2", ... */
  protocol: string;
  /** "[host]:port" as given; an empty host means the same host. */
  authority: string;
  /** Seconds the advertisement may be cached (`ma`, RFC 7838 §3.1). */
  max_age: number;
}

export interface AltSvc {
  /** `clear`: the origin withdraws every alternative it advertised. */
  clear: boolean;
  alternatives: AltService[];
}

/** RFC 7838 §3.1: `ma` defaults to 24 hours. */
const DEFAULT_MAX_AGE = 86_400;

/** Parses the Alt-Svc field lines of one response; malformed members are skipped, as clients do. */
export function parseAltSvc(lines: readonly string[]): AltSvc {
  const alternatives: AltService[] = [];
  let clear = false;
  for (const member of lines.flatMap((l) => splitOutsideQuotes(l, ','))) {
    if (member === 'clear') {
      clear = true;
      continue;
    }
    const [alternative = '', ...params] = splitOutsideQuotes(member, ';');
    const eq = alternative.indexOf('=');
    if (eq <= 0) continue;
    const rawProtocol = alternative.slice(0, eq).trim();
    const authority = unquote(alternative.slice(eq + 1).trim());
    if (!isToken(rawProtocol) || authority === undefined || !/:\d{1,5}$/.test(authority)) continue;
    let protocol: string;
    try {
      protocol = decodeURIComponent(rawProtocol);
    } catch {
      continue;
    }
    let maxAge = DEFAULT_MAX_AGE;
    for (const param of params) {
      const [name = '', value = ''] = param.split('=', 2).map((s) => s.trim());
      const text = value.startsWith('"') ? unquote(value) : value;
      if (name.toLowerCase() === 'ma' && text !== undefined && /^\d+$/.test(text)) maxAge = Number(text);
    }
    alternatives.push({ protocol, authority, max_age: maxAge });
  }
  return { clear, alternatives };
}

/** "h3" and the draft versions ("h3-29", ...) that some servers still advertise. */
export function isHttp3(protocol: string): boolean {
  return protocol === 'h3' || /^h3-\d+$/.test(protocol);
}
