/**
 * What the one input box holds: a domain or hostname, a URL (→ its host), an
 * email address (→ its domain) or an IP address (→ the IP tools). The
 * server validates for real; this only decides which tools make sense and
 * what to send, and says what it took from the input.
 */
export type TargetKind = 'domain' | 'ip';

export interface Target {
  host: string;
  kind: TargetKind;
  /** Set when the host is not the input verbatim: tells the user what was looked up. */
  derivedFrom?: 'url' | 'email' | 'host-and-path' | 'host-and-port';
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isIpv4(s: string): boolean {
  return IPV4.test(s);
}

/** Loose on purpose (the API checks properly): hex groups and colons, optionally an embedded IPv4 tail. */
export function isIpv6(s: string): boolean {
  if (!s.includes(':') || !/^[0-9a-f:.]+$/i.test(s)) return false;
  const doubles = s.split('::').length - 1;
  if (doubles > 1) return false;
  const groups = s.split(':');
  return groups.length >= 3 && groups.length <= 9;
}

export function parseTarget(input: string): Target | null {
  let s = input.trim();
  if (s === '') return null;
  let derivedFrom: Target['derivedFrom'];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    try {
      s = new URL(s).hostname;
      derivedFrom = 'url';
    } catch {
      return { host: s, kind: 'domain' };
    }
  } else if (s.includes('@') && !/[/\s]/.test(s)) {
    s = s.slice(s.lastIndexOf('@') + 1);
    derivedFrom = 'email';
  } else if (/[/?#]/.test(s)) {
    s = s.split(/[/?#]/, 1)[0] ?? s;
    derivedFrom = 'host-and-path';
  }
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end > 0) {
      if (end < s.length - 1) derivedFrom ??= 'host-and-port';
      s = s.slice(1, end);
    }
  } else if (!isIpv6(s) && /^[^:]+:\d+$/.test(s)) {
    s = s.slice(0, s.lastIndexOf(':'));
    derivedFrom ??= 'host-and-port';
  }
  if (s === '') return null;
  if (isIpv4(s) || isIpv6(s))
    return { host: s.toLowerCase(), kind: 'ip', ...(derivedFrom ? { derivedFrom } : {}) };
  return { host: s.toLowerCase(), kind: 'domain', ...(derivedFrom ? { derivedFrom } : {}) };
}
