/**
 * What one authoritative response means for the iteration, decided the way
 * unbound decides it (iterator/iter_scrub.c, iterator/iter_resptype.c):
 *
 * 1. Scrub: a server speaks only for the zone it was asked as. Every record
 *    outside that zone is dropped (RFC 2181 §5.4.1: data from outside the
 *    server's authority is not credible), so a server for evil.test cannot
 *    plant records for bank.test, in any section.
 * 2. Classify: an answer (following the CNAME chain inside the zone), a CNAME
 *    leading out of it, NXDOMAIN, NODATA, a referral to a zone cut strictly
 *    below this one on the way to the name, or lame (REFUSED, SERVFAIL, a
 *    negative answer without AA, a referral upwards or sideways, nothing
 *    usable): the next server is asked.
 * 3. A referral's glue is taken only for the names its NS records name, and
 *    only where they lie inside the referring zone (in bailiwick); glue for
 *    any other name is reported and ignored (the name is looked up instead).
 *
 * Pure: it reads a decoded message and returns a verdict.
 */
import type * as packet from 'dns-packet';
import { rcodeName, typeMnemonic } from '../providers/dns/parameters.js';
import type { DecodedMessage } from '../providers/dns/wire.js';
import { canonicalName, isAtOrBelow, isBelow, sameName } from './names.js';
import type { EngineRecord } from './types.js';

export interface Sections {
  answer: EngineRecord[];
  authority: EngineRecord[];
  additional: EngineRecord[];
}

export interface Referral {
  /** The zone delegated to. */
  zone: string;
  /** Its NS targets, in the order given, lower case. */
  nsNames: string[];
  /** In-bailiwick glue for those names. */
  glue: Map<string, string[]>;
  /** The smallest TTL of the NS RRset and the glue taken. */
  ttl: number;
  /** Glue for an NS name outside the referring zone, ignored. */
  outOfBailiwick: { name: string; address: string }[];
}

export type Verdict =
  /** `records`: the CNAMEs followed inside the zone and the records asked for, each with its RRSIGs. */
  | { kind: 'answer'; records: EngineRecord[]; sections: Sections }
  /** The chain leaves the zone at `target`; `records` are the CNAMEs (with RRSIGs) up to there. */
  | { kind: 'cname'; target: string; records: EngineRecord[]; sections: Sections }
  | { kind: 'nxdomain' | 'nodata'; records: EngineRecord[]; sections: Sections }
  | { kind: 'referral'; referral: Referral; sections: Sections }
  | { kind: 'lame'; why: string };

const rrType = (rr: EngineRecord): string => typeMnemonic(rr.type);
const ttlOf = (rr: EngineRecord): number => (rr as { ttl?: number }).ttl ?? 0;

/** Whether `rr` is an RRSIG over `type` at `owner`. */
function signs(rr: EngineRecord, owner: string, type: string): boolean {
  return (
    rr.type === 'RRSIG' &&
    sameName(rr.name, owner) &&
    typeMnemonic((rr as packet.RrsigAnswer).data.typeCovered) === type
  );
}

function textData(rr: EngineRecord): string {
  return canonicalName(String((rr as { data: unknown }).data));
}

/**
 * Classifies the response of a server of `zone` to `qname`/`qtype`. The message must already
 * answer that question (exchange.ts checks id and question).
 */
export function classify(message: DecodedMessage, zone: string, qname: string, qtype: string): Verdict {
  const rcode = message.rcode;
  if (rcode !== 0 && rcode !== 3) return { kind: 'lame', why: `answered ${rcodeName(rcode)}` };
  if (message.flags.tc) return { kind: 'lame', why: 'answered truncated (TC=1) over TCP' };
  const inZone = (rr: EngineRecord) => isAtOrBelow(rr.name, zone);
  const sections: Sections = {
    answer: message.answers.filter(inZone),
    authority: message.authorities.filter(inZone),
    additional: message.additionals.filter(inZone),
  };
  const aa = message.flags.aa;

  // The answer section, from the name asked along any CNAME chain the zone itself holds.
  const records: EngineRecord[] = [];
  const seen = new Set([canonicalName(qname)]);
  let sname = canonicalName(qname);
  for (;;) {
    const here = sections.answer.filter((rr) => sameName(rr.name, sname));
    if (here.some((rr) => rrType(rr) === qtype)) {
      records.push(...here.filter((rr) => rrType(rr) === qtype || signs(rr, sname, qtype)));
      return { kind: 'answer', records, sections };
    }
    const cname = here.find((rr) => rr.type === 'CNAME');
    if (!cname) break;
    records.push(...here.filter((rr) => rr === cname || signs(rr, sname, 'CNAME')));
    sname = textData(cname);
    // A loop inside one response: the caller, which keeps the whole chain, names it.
    if (seen.has(sname)) break;
    seen.add(sname);
  }

  if (rcode === 3) {
    if (!aa) return { kind: 'lame', why: 'answered NXDOMAIN without AA (not authoritative)' };
    return { kind: 'nxdomain', records, sections };
  }
  if (records.length > 0) return { kind: 'cname', target: sname, records, sections };

  const soa = sections.authority.find((rr) => rr.type === 'SOA' && isAtOrBelow(sname, rr.name));
  if (soa) {
    if (!aa) return { kind: 'lame', why: 'answered NODATA without AA (not authoritative)' };
    return { kind: 'nodata', records, sections };
  }

  // Referral: an NS RRset for a zone strictly below this one, on the way to the name.
  const nsRecords = message.authorities.filter((rr) => rr.type === 'NS');
  const owners = [...new Set(nsRecords.map((rr) => canonicalName(rr.name)))];
  const down = owners.find((owner) => isBelow(owner, zone) && isAtOrBelow(sname, owner));
  if (down !== undefined && sections.answer.length === 0) {
    return { kind: 'referral', referral: referral(message, zone, down), sections };
  }
  const upward = owners.find((owner) => isAtOrBelow(zone, owner));
  if (upward !== undefined && !(aa && sameName(upward, zone))) {
    return {
      kind: 'lame',
      why: `answered with a referral to ${upward}, not below ${zone} (an upward referral: it does not serve ${zone})`,
    };
  }
  // An authoritative NOERROR without records or SOA: NODATA from a server that leaves the SOA out.
  if (aa && sections.answer.length === 0) return { kind: 'nodata', records, sections };
  return { kind: 'lame', why: 'answered neither with data, a negative answer nor a referral' };
}

function referral(message: DecodedMessage, zone: string, child: string): Referral {
  const ns = message.authorities.filter((rr) => rr.type === 'NS' && sameName(rr.name, child));
  const nsNames = [...new Set(ns.map(textData))];
  let ttl = Math.min(...ns.map(ttlOf));
  const glue = new Map<string, string[]>();
  const outOfBailiwick: { name: string; address: string }[] = [];
  for (const rr of message.additionals) {
    if (rr.type !== 'A' && rr.type !== 'AAAA') continue;
    const name = canonicalName(rr.name);
    if (!nsNames.includes(name)) continue;
    const address = String(rr.data);
    if (!isAtOrBelow(name, zone)) {
      outOfBailiwick.push({ name, address });
      continue;
    }
    const list = glue.get(name) ?? [];
    if (!list.includes(address)) list.push(address);
    glue.set(name, list);
    ttl = Math.min(ttl, ttlOf(rr));
  }
  return { zone: child, nsNames, glue, ttl, outOfBailiwick };
}
