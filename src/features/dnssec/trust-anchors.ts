/**
 * DNSSEC trust anchors: where the chain of trust starts (RFC 4033 §3.1). By default the IANA root
 * KSKs, KSK-2017 (key tag 20326) and KSK-2024 (38696), as the DS records IANA publishes in
 * root-anchors.xml (https://data.iana.org/root-anchors/root-anchors.xml). DNSSEC_TRUST_ANCHORS
 * names a file instead, in zone-file format, DS or DNSKEY records, as unbound's root.key and
 * BIND's trust-anchors are: one record per line (parentheses may continue it), `;` comments,
 * owner, then optional TTL and class.
 */
import { readFileSync } from 'node:fs';
import { normalizeName } from '../../dnssec/index.js';
import type { DnskeyData, DsData } from '../../dnssec/types.js';

export interface TrustAnchors {
  /** By owner ('.' for the root), the DS records and DNSKEY records that are trusted there. */
  ds: Map<string, DsData[]>;
  dnskey: Map<string, DnskeyData[]>;
  /** Where they came from, for the answer's findings. */
  origin: string;
}

/** IANA's root-anchors.xml, both KeyDigests with SHA-256. */
export const IANA_ROOT_ANCHORS = `
. 172800 IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D
. 172800 IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16
`;

export class TrustAnchorError extends Error {}

/** Joins parenthesized continuations and drops comments: one logical record per entry. */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  let depth = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/;.*$/, '');
    for (const ch of line) {
      if (ch === '(') depth++;
      else if (ch === ')') depth = Math.max(0, depth - 1);
    }
    pending += ` ${line.replace(/[()]/g, ' ')}`;
    if (depth === 0) {
      if (pending.trim()) out.push(pending.trim());
      pending = '';
    }
  }
  if (pending.trim()) out.push(pending.trim());
  return out;
}

const CLASSES = new Set(['IN', 'CH', 'HS']);

/** Parses DS and DNSKEY records in zone-file format; anything else is an error naming the line. */
export function parseTrustAnchors(text: string, origin: string): TrustAnchors {
  const anchors: TrustAnchors = { ds: new Map(), dnskey: new Map(), origin };
  for (const line of logicalLines(text)) {
    const fields = line.split(/\s+/);
    const owner = fields.shift();
    if (owner === undefined) continue;
    while (fields.length > 0 && (/^\d+$/.test(fields[0]!) || CLASSES.has(fields[0]!.toUpperCase())))
      fields.shift();
    const type = fields.shift()?.toUpperCase();
    const name = normalizeName(owner);
    if (type === 'DS') {
      const [tag, algorithm, digestType, ...digest] = fields;
      const hex = digest.join('');
      if (
        !/^\d+$/.test(tag ?? '') ||
        !/^\d+$/.test(algorithm ?? '') ||
        !/^\d+$/.test(digestType ?? '') ||
        !/^[0-9a-f]+$/i.test(hex)
      )
        throw new TrustAnchorError(
          `${origin}: a DS record must be "owner DS keytag algorithm digesttype hex": ${line}`,
        );
      const list = anchors.ds.get(name) ?? [];
      list.push({
        keyTag: Number(tag),
        algorithm: Number(algorithm),
        digestType: Number(digestType),
        digest: Buffer.from(hex, 'hex'),
      });
      anchors.ds.set(name, list);
    } else if (type === 'DNSKEY') {
      const [flags, protocol, algorithm, ...key] = fields;
      if (
        !/^\d+$/.test(flags ?? '') ||
        !/^\d+$/.test(protocol ?? '') ||
        !/^\d+$/.test(algorithm ?? '') ||
        key.length === 0
      )
        throw new TrustAnchorError(
          `${origin}: a DNSKEY record must be "owner DNSKEY flags protocol algorithm base64": ${line}`,
        );
      const list = anchors.dnskey.get(name) ?? [];
      list.push({
        flags: Number(flags),
        algorithm: Number(algorithm),
        key: Buffer.from(key.join(''), 'base64'),
      });
      anchors.dnskey.set(name, list);
    } else {
      throw new TrustAnchorError(`${origin}: only DS and DNSKEY records are trust anchors: ${line}`);
    }
  }
  if (anchors.ds.size === 0 && anchors.dnskey.size === 0)
    throw new TrustAnchorError(`${origin}: no DS or DNSKEY record`);
  return anchors;
}

/** DNSSEC_TRUST_ANCHORS's file, or the built-in IANA root anchors. Read once, at start-up. */
export function loadTrustAnchors(path: string | undefined): TrustAnchors {
  if (!path) return parseTrustAnchors(IANA_ROOT_ANCHORS, 'the IANA root KSKs (built in)');
  return parseTrustAnchors(readFileSync(path, 'utf8'), path);
}
