/**
 * Compliance with Mozilla's server-side TLS configurations (mozilla-guidelines.ts): the strictest
 * of modern, intermediate and old whose requirements the scan shows met, and for each stricter
 * one what is in the way. What counts as a requirement and what is advice only is in
 * docs/tls-scan.md ("Mozilla configurations"); in short, a server may offer nothing a level
 * does not list, with key exchanges and certificates of the level's kinds and sizes.
 */
import type { MozillaLevel, Ratings, ScannedCertificate } from '../features/tls-scan/tls-scan.schema.js';
import { listNames, offeredProtocols, protocolLabel, type ScanFacts } from './facts.js';
import {
  MOZILLA_CONFIGURATIONS,
  MOZILLA_LEVELS_STRICTEST_FIRST,
  MOZILLA_VERSION,
  type MozillaConfiguration,
} from './mozilla-guidelines.js';

/** The elliptic-curve strength of each key-exchange group (hybrids by their ECDH half). */
const EC_GROUP_BITS: Record<string, number> = {
  x25519: 256,
  x448: 448,
  secp256r1: 256,
  secp384r1: 384,
  secp521r1: 521,
  X25519MLKEM768: 256,
  SecP256r1MLKEM768: 256,
  SecP384r1MLKEM1024: 384,
};

/** Certificate curves as Mozilla (OpenSSL) names them, from what the leaf summary says. */
const CURVE_NAMES: Record<string, string> = {
  'P-256': 'prime256v1',
  'P-384': 'secp384r1',
  'P-521': 'secp521r1',
  prime256v1: 'prime256v1',
  secp384r1: 'secp384r1',
  secp521r1: 'secp521r1',
};
const CURVE_BY_BITS: Record<number, string> = { 256: 'prime256v1', 384: 'secp384r1', 521: 'secp521r1' };

function certificateCurve(cert: ScannedCertificate): string | null {
  const named = cert.leaf.key.curve;
  if (named) return CURVE_NAMES[named] ?? named;
  return cert.key_bits === null ? null : (CURVE_BY_BITS[cert.key_bits] ?? `${cert.key_bits}-bit curve`);
}

function protocolGaps(facts: ScanFacts, level: MozillaLevel, conf: MozillaConfiguration): string[] {
  const extra = offeredProtocols(facts).filter((p) => !conf.tls_versions.includes(p));
  if (extra.length === 0) return [];
  const allowed = conf.tls_versions.map(protocolLabel);
  return [`offers ${listNames(extra.map(protocolLabel))}; ${level} allows ${allowed.join(', ')} only`];
}

function suiteGaps(facts: ScanFacts, level: MozillaLevel, conf: MozillaConfiguration): string[] {
  const gaps: string[] = [];
  const legacy = facts.cipher_suites.filter((s) => s.protocol !== 'TLSv1.3');
  const extraLegacy = legacy.filter(
    (s) => s.openssl_name === null || !conf.ciphers_openssl.includes(s.openssl_name),
  );
  if (extraLegacy.length > 0) {
    const names = extraLegacy.map((s) => s.openssl_name ?? s.name);
    gaps.push(
      conf.ciphers_openssl.length === 0
        ? `accepts TLS 1.2-and-older suites (${listNames(names)}); ${level} has none`
        : `accepts suites ${level} does not list: ${listNames(names)}`,
    );
  }
  const extra13 = facts.cipher_suites.filter(
    (s) => s.protocol === 'TLSv1.3' && !conf.ciphersuites.includes(s.name),
  );
  if (extra13.length > 0) {
    gaps.push(`accepts TLS 1.3 suites ${level} does not list: ${listNames(extra13.map((s) => s.name))}`);
  }
  return gaps;
}

function keyExchangeGaps(facts: ScanFacts, level: MozillaLevel, conf: MozillaConfiguration): string[] {
  const gaps: string[] = [];
  const weakEc = facts.groups.filter(
    (g) => g.kind !== 'ffdhe' && (EC_GROUP_BITS[g.name] ?? 0) < conf.ecdh_param_size,
  );
  if (weakEc.length > 0) {
    gaps.push(
      `accepts ${listNames(weakEc.map((g) => g.name))}, under ${level}'s ${conf.ecdh_param_size}-bit minimum for ECDHE`,
    );
  }
  const ffdhe = facts.groups.filter((g) => g.kind === 'ffdhe');
  const minDh = conf.dh_param_size;
  if (minDh === null) {
    if (ffdhe.length > 0) {
      gaps.push(`accepts finite-field groups (${listNames(ffdhe.map((g) => g.name))}); ${level} uses none`);
    }
  } else {
    const small = ffdhe.filter((g) => Number.parseInt(g.name.slice(5), 10) < minDh);
    if (small.length > 0) {
      gaps.push(
        `accepts ${listNames(small.map((g) => g.name))}, under ${level}'s ${minDh}-bit minimum for DHE`,
      );
    }
    if (facts.dhe && facts.dhe.bits < minDh) {
      gaps.push(`DHE suites get a ${facts.dhe.bits}-bit group, under ${level}'s ${minDh}-bit minimum`);
    }
  }
  return gaps;
}

function certificateGaps(facts: ScanFacts, level: MozillaLevel, conf: MozillaConfiguration): string[] {
  const certs = facts.certificates;
  // Nothing to judge: the scan got no certificate (its notes say why); protocol and suite gaps still stand.
  if (certs.length === 0) return [];
  const gaps: string[] = [];
  const typeOf = (c: ScannedCertificate) => c.key_type.toLowerCase();
  const types: readonly string[] = conf.certificate_types;
  // A client of the level must be able to get a certificate of a listed type; others served besides are no gap.
  if (!certs.some((c) => types.includes(typeOf(c)))) {
    const served = listNames(certs.map((c) => c.key_type));
    gaps.push(
      `serves ${served} certificates only; ${level} wants ${conf.certificate_types.join(' or ').toUpperCase()}`,
    );
  }
  const minRsa = conf.rsa_key_size;
  if (minRsa !== null) {
    for (const c of certs) {
      if (c.key_type === 'RSA' && c.key_bits !== null && c.key_bits < minRsa) {
        gaps.push(`serves a ${c.key_bits}-bit RSA certificate; ${level} wants at least ${minRsa} bits`);
      }
    }
  }
  if (types.includes('ecdsa')) {
    for (const c of certs.filter((x) => x.key_type === 'ECDSA')) {
      const curve = certificateCurve(c);
      if (curve !== null && !conf.certificate_curves.includes(curve)) {
        gaps.push(
          `serves an ECDSA certificate on ${curve}; ${level} wants ${conf.certificate_curves.join(' or ')}`,
        );
      }
    }
  }
  return gaps;
}

function orderGaps(facts: ScanFacts, level: MozillaLevel, conf: MozillaConfiguration): string[] {
  if (!conf.server_preferred_order) return [];
  // Only where the level's list mixes strong and weak suites, i.e. below TLS 1.3; a false here is
  // the scan's finding that the client's order wins, never PrioritizeChaCha (chacha20_preference).
  const clientOrder = offeredProtocols(facts).filter(
    (p) => p !== 'TLSv1.3' && facts.server_preference[p] === false,
  );
  if (clientOrder.length === 0) return [];
  return [
    `lets the client choose the suite in ${listNames(clientOrder.map(protocolLabel))}; ${level} wants the server's order`,
  ];
}

/** What keeps the scanned server from `level`; empty when it complies. */
export function mozillaGaps(facts: ScanFacts, level: MozillaLevel): string[] {
  const conf = MOZILLA_CONFIGURATIONS[level];
  return [
    ...protocolGaps(facts, level, conf),
    ...suiteGaps(facts, level, conf),
    ...keyExchangeGaps(facts, level, conf),
    ...certificateGaps(facts, level, conf),
    ...orderGaps(facts, level, conf),
  ];
}

export function rateMozilla(facts: ScanFacts): Ratings['mozilla'] {
  const all = MOZILLA_LEVELS_STRICTEST_FIRST.map((level) => ({ level, reasons: mozillaGaps(facts, level) }));
  const met = all.find((g) => g.reasons.length === 0);
  const meets = met?.level ?? null;
  const stricter = met ? all.slice(0, all.indexOf(met)) : all;
  return { version: MOZILLA_VERSION, meets, gaps: stricter };
}
