/**
 * The canonical form of records and RRsets (RFC 4034 §6) and the data an RRSIG
 * signs (RFC 4034 §3.1.8.1), with the wildcard rule of its Labels field
 * (RFC 4035 §5.3.2, §5.3.4).
 *
 * Which embedded names are lower-cased: the types RFC 4034 §6.2 item 3 lists,
 * as RFC 6840 §5.1 corrected it: RRSIG's signer name yes, NSEC's next name no
 * (HINFO, also listed, holds no names). Types dns-packet decodes into objects
 * are lower-cased field by field; the older ones it hands over as raw RDATA
 * (MD, MF, MB, MG, MR, MINFO, AFSDB, RT, SIG, PX, NXT, KX) are lower-cased in
 * their wire form. A6, listed too, is historic (RFC 6563) and left as it is.
 */
import { canonicalName, labelsOf, lastLabels, normalizeName, rrsigLabelCount, wildcardOf } from './names.js';
import type { DnsRecord, RrsigData } from './types.js';
import { classCode, nameWire, rdataWire, typeCode } from './wire.js';

/** The record's data with the names RFC 4034 §6.2 / RFC 6840 §5.1 lower-case, lower-cased. */
export function canonicalData(type: string, data: unknown): unknown {
  switch (type.toUpperCase()) {
    case 'NS':
    case 'CNAME':
    case 'PTR':
    case 'DNAME':
      return canonicalName(data as string);
    case 'MX': {
      const mx = data as { exchange: string };
      return { ...mx, exchange: canonicalName(mx.exchange) };
    }
    case 'SOA': {
      const soa = data as { mname: string; rname: string };
      return { ...soa, mname: canonicalName(soa.mname), rname: canonicalName(soa.rname) };
    }
    case 'SRV': {
      const srv = data as { target: string };
      return { ...srv, target: canonicalName(srv.target) };
    }
    case 'RP': {
      const rp = data as { mbox: string; txt: string };
      return { ...rp, mbox: canonicalName(rp.mbox), txt: canonicalName(rp.txt) };
    }
    case 'NAPTR': {
      const naptr = data as { replacement: string };
      return { ...naptr, replacement: canonicalName(naptr.replacement) };
    }
    case 'RRSIG': {
      const sig = data as RrsigData;
      return { ...sig, signersName: canonicalName(sig.signersName) };
    }
    case 'CAA': {
      // dns-packet rewrites flags to 128 when issuerCritical is set; keep the decoded octet.
      const { issuerCritical: _dropped, ...caa } = data as { issuerCritical?: boolean };
      return caa;
    }
    default: {
      const layout = LEGACY_NAME_LAYOUT[typeCode(type)];
      return layout && Buffer.isBuffer(data) ? lowerLegacyNames(data, layout) : data;
    }
  }
}

/** The canonical RDATA octets of one record (RFC 4034 §6.2 items 3 and 4: no compression, names lower-cased). */
export function canonicalRdata(record: DnsRecord): Buffer {
  return rdataWire(record.type, canonicalData(record.type, record.data));
}

// Where the names sit in the RDATA of the types dns-packet leaves as octets:
// a list of steps, each a fixed field to skip (a number) or a name ('name').
// RFC 3597 §4 allows compression only in the RFC 1035 types (MD .. MINFO); such
// a name cannot be followed outside its message and is left as it is.
type Step = number | 'name';
const LEGACY_NAME_LAYOUT: Record<number, Step[]> = {
  3: ['name'], // MD
  4: ['name'], // MF
  7: ['name'], // MB
  8: ['name'], // MG
  9: ['name'], // MR
  14: ['name', 'name'], // MINFO
  18: [2, 'name'], // AFSDB
  21: [2, 'name'], // RT
  24: [18, 'name'], // SIG: the RRSIG layout (RFC 2535 §4.1)
  26: [2, 'name', 'name'], // PX
  30: ['name'], // NXT
  36: [2, 'name'], // KX
};

function lowerLegacyNames(rdata: Buffer, steps: Step[]): Buffer {
  const out = Buffer.from(rdata);
  let offset = 0;
  for (const step of steps) {
    if (typeof step === 'number') {
      offset += step;
      continue;
    }
    while (offset < out.length) {
      const length = out[offset]!;
      if (length === 0) break;
      if (length >= 0x40) return rdata; // a compression pointer: not ours to follow
      for (let i = offset + 1; i <= offset + length && i < out.length; i++) {
        const octet = out[i]!;
        if (octet >= 0x41 && octet <= 0x5a) out[i] = octet + 0x20;
      }
      offset += length + 1;
    }
    offset += 1;
  }
  return out;
}

/** One RR in canonical form (RFC 4034 §6.2) with the given owner and TTL. */
function rrWire(owner: string, record: DnsRecord, rdata: Buffer, ttl: number): Buffer {
  const name = nameWire(canonicalName(owner));
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(typeCode(record.type), 0);
  fixed.writeUInt16BE(classCode(record.class), 2);
  fixed.writeUInt32BE(ttl >>> 0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([name, fixed, rdata]);
}

/**
 * The RRs of an RRset in canonical order (RFC 4034 §6.3: by canonical RDATA, as
 * left-justified unsigned octets), duplicates removed, each paired with its
 * canonical RDATA.
 */
export function canonicalOrder<R extends DnsRecord>(rrset: readonly R[]): { record: R; rdata: Buffer }[] {
  const entries = rrset.map((record) => ({ record, rdata: canonicalRdata(record) }));
  entries.sort((a, b) => Buffer.compare(a.rdata, b.rdata));
  return entries.filter((entry, i) => i === 0 || !entry.rdata.equals(entries[i - 1]!.rdata));
}

/**
 * The RRset in canonical form and order (RFC 4034 §6.2, §6.3): every RR with the
 * owner name lower-cased (or `owner` when given, for a wildcard's expansion),
 * the TTL set to `originalTtl`, and duplicates removed.
 */
export function canonicalRRsetWire(rrset: readonly DnsRecord[], originalTtl: number, owner?: string): Buffer {
  return Buffer.concat(
    canonicalOrder(rrset).map(({ record, rdata }) =>
      rrWire(owner ?? record.name, record, rdata, originalTtl),
    ),
  );
}

/** The RRSIG RDATA without its signature, signer name lower-cased: the head of the signed data. */
export function rrsigHead(rrsig: RrsigData): Buffer {
  return rdataWire('RRSIG', {
    ...rrsig,
    signersName: canonicalName(rrsig.signersName),
    signature: Buffer.alloc(0),
  });
}

/**
 * The octets an RRSIG's signature covers (RFC 4034 §3.1.8.1):
 * RRSIG_RDATA (without the signature) | RR(1) | RR(2) | ..., each RR in
 * canonical form with the RRSIG's Original TTL, and, for an answer expanded from
 * a wildcard (Labels fewer than the owner's), the wildcard as owner
 * (RFC 4035 §5.3.2).
 */
export function signedData(rrsig: RrsigData, rrset: readonly DnsRecord[]): Buffer {
  const first = rrset[0];
  if (!first) return rrsigHead(rrsig);
  const expansion = wildcardExpansion(first.name, rrsig.labels);
  const owner = expansion.kind === 'expanded' ? expansion.wildcard : first.name;
  return Buffer.concat([rrsigHead(rrsig), canonicalRRsetWire(rrset, rrsig.originalTTL, owner)]);
}

/** What an RRSIG's Labels field says about the owner name it signs (RFC 4035 §5.3.4). */
export type WildcardExpansion =
  /** Labels counts the owner's labels: the RRset is the owner's own. */
  | { kind: 'exact' }
  /**
   * Fewer labels: the RRset was synthesized from `wildcard` (RFC 4034 §3.1.3).
   * `closestEncloser` is the wildcard's parent, `nextCloser` the owner's
   * ancestor one label below it: its non-existence must be proven.
   */
  | { kind: 'expanded'; wildcard: string; closestEncloser: string; nextCloser: string }
  /** More labels than the owner has: the RRSIG cannot be over this owner. */
  | { kind: 'invalid' };

export function wildcardExpansion(owner: string, labels: number): WildcardExpansion {
  const count = rrsigLabelCount(owner);
  if (labels === count) return { kind: 'exact' };
  if (labels > count) return { kind: 'invalid' };
  const closestEncloser = lastLabels(owner, labels);
  return {
    kind: 'expanded',
    wildcard: wildcardOf(closestEncloser),
    closestEncloser,
    nextCloser: lastLabels(owner, labels + 1),
  };
}

/** Whether `name` is a wildcard owner (its leftmost label is '*'). */
export function isWildcardName(name: string): boolean {
  return labelsOf(normalizeName(name))[0] === '*';
}
