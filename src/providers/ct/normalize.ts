/**
 * Pure helpers every CT adapter uses to map vendor rows onto CtIssuance:
 * DNS names, timestamps, serials and issuer names. No I/O.
 */
import { domainToASCII } from 'node:url';
import type { CtIssuer } from './types.js';

// RFC 1035 §2.3.1 preferred name syntax (letters, digits, inner hyphens), as
// the CA/Browser Forum Baseline Requirements §7.1.4.2 require of dNSName SANs.
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A certificate name as a lower-case A-label DNS name, `*.` kept on a
 * wildcard; undefined for anything that is not a DNS name: email addresses
 * (crt.sh lists rfc822Name identities among names), IP addresses, CA names
 * with spaces, a `*` anywhere but the whole first label.
 */
export function certificateDnsName(raw: string): string | undefined {
  let name = raw.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || name.includes('@') || name.length > 253) return undefined;
  const wildcard = name.startsWith('*.');
  let base = wildcard ? name.slice(2) : name;
  // Certificates carry A-labels; a U-label is converted rather than dropped.
  // domainToASCII returns '' for anything it cannot convert.
  if (/[^\x20-\x7e]/.test(base)) {
    base = domainToASCII(base);
    if (base === '') return undefined;
  }
  const labels = base.split('.');
  if (!labels.every((label) => LDH_LABEL.test(label))) return undefined;
  // An all-numeric last label is an IP address, never a TLD (RFC 3696 §2).
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) return undefined;
  return wildcard ? `*.${base}` : base;
}

/** The distinct DNS names among `raw`, normalized and sorted. */
export function certificateDnsNames(raw: readonly (string | null | undefined)[]): string[] {
  const names = new Set<string>();
  for (const value of raw) {
    if (typeof value !== 'string') continue;
    const name = certificateDnsName(value);
    if (name) names.add(name);
  }
  return [...names].sort();
}

/**
 * ISO 8601 UTC (`2023-01-13T00:00:00Z`, milliseconds only when non-zero).
 * crt.sh writes timestamps without a zone (`2023-01-13T00:00:00`); they are
 * UTC, like everything in CT. Undefined for an unparseable value.
 */
export function isoUtc(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) return undefined;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** A serial number as lower-case hex without separators, or null when absent. */
export function normalizeSerial(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const hex = value.trim().toLowerCase().replace(/[\s:]/g, '');
  return /^[0-9a-f]+$/.test(hex) ? hex : null;
}

/**
 * The attributes of a distinguished name in the one-line form crt.sh and
 * Cert Spotter print (`C=US, O="thawte, Inc.", CN=thawte SSL CA - G2`):
 * comma-separated `type=value`, values optionally double-quoted, `\` escapes
 * (RFC 4514 §2.4 style). Attribute types are upper-cased.
 */
export function parseDistinguishedName(dn: string): { type: string; value: string }[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < dn.length; i++) {
    const ch = dn[i] as string;
    if (ch === '\\' && i + 1 < dn.length) {
      current += dn[++i];
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (ch === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  const attributes: { type: string; value: string }[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    attributes.push({ type: part.slice(0, eq).trim().toUpperCase(), value: part.slice(eq + 1).trim() });
  }
  return attributes;
}

/** The issuer's CN and O from its distinguished name; a name without a CN is kept whole. */
export function issuerFromDn(dn: string): CtIssuer {
  const attributes = parseDistinguishedName(dn);
  const cn = attributes.find((a) => a.type === 'CN')?.value;
  const o = attributes.find((a) => a.type === 'O')?.value;
  return { name: cn || dn.trim(), organization: o || null };
}
