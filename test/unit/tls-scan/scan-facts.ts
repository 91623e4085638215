/**
 * Hand-built scan answers for the judging tests: suites come from the real suite table (by
 * OpenSSL or IANA name) with their NCSC class computed as the scan engine computes it, so a
 * fixture reads like the server configuration it stands for.
 */

import type {
  ScanGroupName,
  ScannedCertificate,
  ScannedGroup,
  ScannedSuite,
  ScanProtocol,
} from '../../../src/features/tls-scan/tls-scan.schema.js';
import { CIPHER_SUITES } from '../../../src/tls-scan/cipher-suites.js';
import type { ScanFacts } from '../../../src/tls-scan/facts.js';
import { ncscDheClass, ncscGroupClass, ncscSuiteClass } from '../../../src/tls-scan/ncsc.js';
import { NOT_STAPLED } from '../../../src/tls-scan/ocsp.js';

export function suite(protocol: ScanProtocol, name: string): ScannedSuite {
  const row = CIPHER_SUITES.find((s) => s.opensslName === name || s.name === name);
  if (!row) throw new Error(`no suite ${name}`);
  return {
    protocol,
    code: `0x${row.code.toString(16).toUpperCase().padStart(4, '0')}`,
    name: row.name,
    openssl_name: row.opensslName,
    key_exchange: row.keyExchange,
    authentication: row.authentication,
    encryption: row.encryption,
    bits: row.bits,
    export: row.export,
    ncsc: ncscSuiteClass(row, protocol),
  };
}

export function suites(protocol: ScanProtocol, names: readonly string[]): ScannedSuite[] {
  return names.map((n) => suite(protocol, n));
}

const GROUP_CODES: Record<ScanGroupName, number> = {
  x25519: 29,
  x448: 30,
  secp256r1: 23,
  secp384r1: 24,
  secp521r1: 25,
  ffdhe2048: 256,
  ffdhe3072: 257,
  ffdhe4096: 258,
  ffdhe6144: 259,
  ffdhe8192: 260,
  X25519MLKEM768: 0x11ec,
  SecP256r1MLKEM768: 0x11eb,
  SecP384r1MLKEM1024: 0x11ed,
};

export function group(name: ScanGroupName, protocol: 'TLSv1.3' | 'TLSv1.2' = 'TLSv1.3'): ScannedGroup {
  const kind = name.startsWith('ffdhe') ? 'ffdhe' : name.includes('MLKEM') ? 'hybrid_pq' : 'ecdhe';
  return { name, code: GROUP_CODES[name], kind, protocol, ncsc: ncscGroupClass(name) };
}

/** A DHE group: an RFC 7919 one of that size by default, else the server's own prime. */
export function dhe(bits: number, own = false): ScanFacts['dhe'] {
  const named = ({ 2048: 'ffdhe2048', 3072: 'ffdhe3072', 4096: 'ffdhe4096' } as const)[bits as 2048];
  const group = own ? null : (named ?? null);
  return { bits, group, ncsc: ncscDheClass(bits, group !== null) };
}

export function certificate(
  keyType: 'RSA' | 'ECDSA',
  bits: number,
  status: ScannedCertificate['verdict']['status'] = 'trusted',
  opts: { expired?: boolean; curve?: string } = {},
): ScannedCertificate {
  const fp = `${keyType}:${bits}`.padEnd(95, '0');
  const rejected = status === 'rejected';
  return {
    key_type: keyType,
    key_bits: bits,
    fingerprint_sha256: fp,
    protocol: 'TLSv1.3',
    leaf: {
      subject: 'CN=example.com',
      issuer: 'CN=Example CA',
      serial: '01',
      not_before: '2026-01-01T00:00:00.000Z',
      not_after: opts.expired ? '2026-02-01T00:00:00.000Z' : '2026-12-01T00:00:00.000Z',
      expired: opts.expired ?? false,
      self_signed: false,
      key: keyType === 'RSA' ? { type: 'RSA', bits } : { type: 'EC', bits, curve: opts.curve ?? `P-${bits}` },
      signature_algorithm: keyType === 'RSA' ? 'sha256WithRSAEncryption' : 'ecdsa-with-SHA256',
      fingerprint_sha256: fp,
      san: ['example.com'],
      days_remaining: opts.expired ? -10 : 200,
      ocsp_urls: [],
      ca_issuer_urls: [],
      sct_count: 2,
    },
    chain: [],
    authorized: !rejected,
    authorization_error: rejected
      ? opts.expired
        ? 'CERT_HAS_EXPIRED'
        : 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'
      : null,
    verdict: {
      status,
      summary: rejected
        ? opts.expired
          ? 'The certificate has expired.'
          : 'The chain does not reach a trusted root.'
        : 'Trusted.',
    },
    findings: opts.expired ? [{ code: 'expired', severity: 'critical', message: 'Expired.' }] : [],
  };
}

const NO_FEATURES: ScanFacts['features'] = {
  secure_renegotiation: null,
  compression: null,
  fallback_scsv: null,
  extended_master_secret: null,
  session_tickets: null,
  alpn: ['h2', 'http/1.1'],
  heartbeat: null,
};

/** The TLS ≤ 1.2 features of a well-kept OpenSSL server. */
export const GOOD_LEGACY_FEATURES: ScanFacts['features'] = {
  secure_renegotiation: true,
  compression: false,
  fallback_scsv: true,
  extended_master_secret: true,
  session_tickets: false,
  alpn: ['h2', 'http/1.1'],
  heartbeat: false,
};

type FactsInput = Partial<Omit<ScanFacts, 'protocols'>> & { offered: readonly ScanProtocol[] };

/** A scan answer: `offered` protocols, the rest defaulting to a quiet TLS 1.3 server. */
export function facts(input: FactsInput): ScanFacts {
  const { offered, ...rest } = input;
  const all: ScanProtocol[] = ['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
  return {
    target: 'example.com',
    service: 'https',
    port: 443,
    address: '192.0.2.1',
    sni: 'example.com',
    protocols: all.map((name) => ({ name, offered: offered.includes(name) })),
    cipher_suites: [],
    server_preference: {},
    chacha20_preference: {},
    groups: [],
    dhe: null,
    certificates: [certificate('ECDSA', 256)],
    without_sni: null,
    ocsp_stapling: NOT_STAPLED,
    features: NO_FEATURES,
    handshakes: 20,
    handshake_budget: 150,
    complete: true,
    notes: [],
    elapsed_ms: 900,
    scanned_at: '2026-07-01T00:00:00.000Z',
    ...rest,
  };
}

export const TLS13_SUITES = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
];
export const MODERN_GROUPS = [
  group('X25519MLKEM768'),
  group('x25519'),
  group('secp256r1'),
  group('secp384r1'),
];

/** Mozilla modern: TLS 1.3 only, an ECDSA P-256 certificate. */
export function modernServer(): ScanFacts {
  return facts({
    offered: ['TLSv1.3'],
    cipher_suites: suites('TLSv1.3', TLS13_SUITES),
    server_preference: { 'TLSv1.3': false },
    groups: MODERN_GROUPS,
  });
}

/** nginx with Mozilla's intermediate settings and an RSA 2048 certificate. */
export function intermediateServer(): ScanFacts {
  return facts({
    offered: ['TLSv1.2', 'TLSv1.3'],
    cipher_suites: [
      ...suites('TLSv1.3', TLS13_SUITES),
      ...suites('TLSv1.2', [
        'ECDHE-RSA-AES128-GCM-SHA256',
        'ECDHE-RSA-AES256-GCM-SHA384',
        'ECDHE-RSA-CHACHA20-POLY1305',
      ]),
    ],
    server_preference: { 'TLSv1.2': false, 'TLSv1.3': false },
    groups: [
      ...MODERN_GROUPS,
      group('x25519', 'TLSv1.2'),
      group('secp256r1', 'TLSv1.2'),
      group('secp384r1', 'TLSv1.2'),
    ],
    certificates: [certificate('RSA', 2048)],
    features: GOOD_LEGACY_FEATURES,
  });
}

/** Mozilla old (5.8): TLS 1.0 to 1.3, static RSA and 3DES at the bottom, server order enforced. */
export function oldServer(): ScanFacts {
  const legacy = ['ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA', 'AES128-SHA', 'AES256-SHA', 'DES-CBC3-SHA'];
  return facts({
    offered: ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'],
    cipher_suites: [
      ...suites('TLSv1.3', TLS13_SUITES),
      ...suites('TLSv1.2', [
        'ECDHE-RSA-AES128-GCM-SHA256',
        'ECDHE-RSA-AES256-GCM-SHA384',
        'ECDHE-RSA-CHACHA20-POLY1305',
        'ECDHE-RSA-AES128-SHA256',
        'AES128-GCM-SHA256',
        ...legacy,
      ]),
      ...suites('TLSv1.1', legacy),
      ...suites('TLSv1', legacy),
    ],
    server_preference: { TLSv1: true, 'TLSv1.1': true, 'TLSv1.2': true, 'TLSv1.3': false },
    chacha20_preference: { 'TLSv1.2': false },
    groups: [...MODERN_GROUPS, group('x25519', 'TLSv1.2'), group('secp256r1', 'TLSv1.2')],
    certificates: [certificate('RSA', 2048)],
    features: GOOD_LEGACY_FEATURES,
  });
}
