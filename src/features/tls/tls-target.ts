/**
 * What GET /api/tls accepts as `target`, as a pure function: the host whose
 * certificate on port 443 is inspected.
 *
 * Accepted: a host name (IDN converted to A-labels, trailing dot dropped,
 * lower-cased, `_` allowed in labels since some hosts have one), an IPv4 or
 * IPv6 literal (alternative IPv4 spellings such as `0x7f.1` are read the way
 * resolver libraries read them, and then judged by the address), `[v6]`,
 * `HOST:443`, and a pasted http(s) URL, of which only the host is used (its
 * path and query are ignored). A port other than 443, any other scheme, a
 * URL with user:password, a path without a scheme, or anything else is a 400.
 */
import { badInput } from '../../errors.js';
import { parseHostLiteral } from '../../net/address.js';
import { normalizeDomain } from '../../net/names.js';

export interface TlsTarget {
  /** Lower-case A-label name without trailing dot, or the canonical text of an IP literal. */
  host: string;
  /** An IP literal: no DNS, and no SNI is sent (RFC 6066 §3). */
  literal: boolean;
}

const PORT = '443';

export function parseTlsTarget(input: string): TlsTarget {
  const raw = input.trim();
  if (raw === '') throw badInput('target', 'must not be empty');
  return hostOf(raw.includes('://') ? fromUrl(raw) : fromHostPort(raw));
}

function fromUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badInput('target', 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badInput('target', `scheme ${url.protocol.slice(0, -1)} is not accepted (give a host name)`);
  }
  if (url.username !== '' || url.password !== '') throw badInput('target', 'must not carry user:password');
  if (url.port !== '' && url.port !== PORT)
    throw badInput('target', `port ${url.port} is not inspected (only 443)`);
  return url.hostname;
}

function fromHostPort(raw: string): string {
  if (/[\s/?#@\\]/.test(raw)) throw badInput('target', 'must be a host name, an IP address or an https URL');
  // [v6] or [v6]:port
  const bracketed = /^(\[[^\]]*\])(?::(\d+))?$/.exec(raw);
  if (bracketed) {
    checkPort(bracketed[2]);
    return bracketed[1]!;
  }
  const colons = raw.split(':').length - 1;
  if (colons > 1) return raw; // a bare IPv6 literal
  if (colons === 1) {
    const [host, port] = raw.split(':');
    checkPort(port);
    return host!;
  }
  return raw;
}

function checkPort(port: string | undefined): void {
  if (port === undefined) return;
  if (!/^\d+$/.test(port)) throw badInput('target', 'has an invalid port');
  if (String(Number(port)) !== PORT) throw badInput('target', `port ${port} is not inspected (only 443)`);
}

function hostOf(host: string): TlsTarget {
  const literal = parseHostLiteral(host, 'target');
  if (literal !== undefined) return { host: literal, literal: true };
  return { host: normalizeDomain(host, { allowUnderscore: true, param: 'target' }), literal: false };
}
