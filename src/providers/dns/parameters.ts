/**
 * DNS protocol number tables. Sources (IANA "Domain Name System (DNS)
 * Parameters", https://www.iana.org/assignments/dns-parameters/):
 * Resource Record TYPEs, DNS RCODEs, and the Extended DNS Error Codes registry
 * (RFC 8914 §5.2 and later additions).
 */

/** RR TYPE mnemonic → code, for every mnemonic dns-packet may produce plus SVCB/HTTPS (RFC 9460). */
export const RR_TYPE_CODES: Readonly<Record<string, number>> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  NULL: 10,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  RP: 17,
  AFSDB: 18,
  SIG: 24,
  KEY: 25,
  AAAA: 28,
  LOC: 29,
  SRV: 33,
  NAPTR: 35,
  KX: 36,
  CERT: 37,
  DNAME: 39,
  OPT: 41,
  APL: 42,
  DS: 43,
  SSHFP: 44,
  IPSECKEY: 45,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  DHCID: 49,
  NSEC3: 50,
  NSEC3PARAM: 51,
  TLSA: 52,
  HIP: 55,
  CDS: 59,
  CDNSKEY: 60,
  SVCB: 64,
  HTTPS: 65,
  SPF: 99,
  TKEY: 249,
  TSIG: 250,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
  URI: 256,
  CAA: 257,
  TA: 32768,
  DLV: 32769,
};

const CODE_TO_TYPE = new Map(Object.entries(RR_TYPE_CODES).map(([name, code]) => [code, name]));

/**
 * Mnemonic for a type as dns-packet spells it: it names unknown codes
 * `UNKNOWN_<n>` (SVCB and HTTPS among them), which we turn into the registry
 * mnemonic or the RFC 3597 `TYPE<n>` form.
 */
export function typeMnemonic(packetType: string): string {
  const unknown = /^UNKNOWN_(\d+)$/.exec(packetType);
  if (!unknown) return packetType;
  const code = Number(unknown[1]);
  return CODE_TO_TYPE.get(code) ?? `TYPE${code}`;
}

/** The type name dns-packet's encoder accepts (it has no SVCB/HTTPS entry, but takes `UNKNOWN_<n>`). */
export function packetTypeName(mnemonic: string): string {
  if (mnemonic === 'SVCB' || mnemonic === 'HTTPS') return `UNKNOWN_${RR_TYPE_CODES[mnemonic]}`;
  return mnemonic;
}

const RCODE_NAMES: Readonly<Record<number, string>> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
  11: 'DSOTYPENI',
  // 16 is BADSIG in a TSIG record but BADVERS in a header+OPT rcode, which is the only place we read it.
  16: 'BADVERS',
  17: 'BADKEY',
  18: 'BADTIME',
  19: 'BADMODE',
  20: 'BADNAME',
  21: 'BADALG',
  22: 'BADTRUNC',
  23: 'BADCOOKIE',
};

export function rcodeName(code: number): string {
  return RCODE_NAMES[code] ?? `RCODE${code}`;
}

export function rcodeNumber(name: string): number | undefined {
  for (const [code, n] of Object.entries(RCODE_NAMES)) if (n === name) return Number(code);
  const generic = /^RCODE(\d+)$/.exec(name);
  return generic ? Number(generic[1]) : undefined;
}

/** Extended DNS Error INFO-CODEs (RFC 8914 §4 and the IANA registry). */
const EDE_NAMES: Readonly<Record<number, string>> = {
  0: 'Other Error',
  1: 'Unsupported DNSKEY Algorithm',
  2: 'Unsupported DS Digest Type',
  3: 'Stale Answer',
  4: 'Forged Answer',
  5: 'DNSSEC Indeterminate',
  6: 'DNSSEC Bogus',
  7: 'Signature Expired',
  8: 'Signature Not Yet Valid',
  9: 'DNSKEY Missing',
  10: 'RRSIGs Missing',
  11: 'No Zone Key Bit Set',
  12: 'NSEC Missing',
  13: 'Cached Error',
  14: 'Not Ready',
  15: 'Blocked',
  16: 'Censored',
  17: 'Filtered',
  18: 'Prohibited',
  19: 'Stale NXDomain Answer',
  20: 'Not Authoritative',
  21: 'Not Supported',
  22: 'No Reachable Authority',
  23: 'Network Error',
  24: 'Invalid Data',
  25: 'Signature Expired before Valid',
  26: 'Too Early',
  27: 'Unsupported NSEC3 Iterations Value',
  28: 'Unable to conform to policy',
  29: 'Synthesized',
};

/** Registry name of an Extended DNS Error code, or `EDE <n>` for codes not (yet) listed. */
export function edeName(code: number): string {
  return EDE_NAMES[code] ?? `EDE ${code}`;
}

/** EDNS option code of Extended DNS Errors (RFC 8914 §2). */
export const EDNS_OPTION_EDE = 15;
