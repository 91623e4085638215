/**
 * Mozilla's server-side TLS configurations as data, copied field for field from the guidelines
 * JSON of github.com/mozilla/ssl-config-generator (src/static/guidelines/, as of 2026-05):
 * modern and intermediate from 6.0.json, old from 5.8.json, because 6.0 dropped "old"
 * ("not recommended"; the generator's commit f196de9) and 5.8 is the last version defining it.
 * 5.8 and 6.0 are otherwise identical. Only the fields mozilla.ts reads, or documents as advice,
 * are kept; `oldest_clients` is there for the docs. To update: copy the new JSON's values and
 * bump MOZILLA_VERSION; the tests in test/unit/tls-scan/mozilla.test.ts say what changes.
 */
import type { MozillaLevel } from '../features/tls-scan/tls-scan.schema.js';

export const MOZILLA_VERSION = '6.0 (old: 5.8)';

export interface MozillaConfiguration {
  /** The guidelines file the values come from. */
  source: string;
  certificate_curves: readonly string[];
  certificate_signatures: readonly string[];
  certificate_types: readonly ('ecdsa' | 'rsa')[];
  /** TLS ≤ 1.2 suites by OpenSSL name. */
  ciphers_openssl: readonly string[];
  /** TLS 1.3 suites. */
  ciphersuites: readonly string[];
  dh_param_size: number | null;
  ecdh_param_size: number;
  hsts_min_age: number;
  maximum_certificate_lifespan: number;
  ocsp_staple: boolean;
  oldest_clients: readonly string[];
  rsa_key_size: number | null;
  server_preferred_order: boolean;
  tls_curves: readonly string[];
  tls_versions: readonly string[];
}

const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
const CURVES = ['X25519MLKEM768', 'X25519', 'prime256v1', 'secp384r1'];
const INTERMEDIATE_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];

/** Strictest first: the order `meets` is looked for in. */
export const MOZILLA_CONFIGURATIONS: Readonly<Record<MozillaLevel, MozillaConfiguration>> = {
  modern: {
    source: 'src/static/guidelines/6.0.json',
    certificate_curves: ['prime256v1', 'secp384r1'],
    certificate_signatures: ['ecdsa-with-SHA256', 'ecdsa-with-SHA384', 'ecdsa-with-SHA512'],
    certificate_types: ['ecdsa'],
    ciphers_openssl: [],
    ciphersuites: TLS13_SUITES,
    dh_param_size: null,
    ecdh_param_size: 256,
    hsts_min_age: 63072000,
    maximum_certificate_lifespan: 90,
    ocsp_staple: true,
    oldest_clients: [
      'Firefox 63',
      'Android 10.0',
      'Chrome 70',
      'Edge 75',
      'Java 11',
      'OpenSSL 1.1.1',
      'Opera 57',
      'Safari 12.1',
    ],
    rsa_key_size: null,
    server_preferred_order: false,
    tls_curves: CURVES,
    tls_versions: ['TLSv1.3'],
  },
  intermediate: {
    source: 'src/static/guidelines/6.0.json',
    certificate_curves: ['prime256v1', 'secp384r1'],
    certificate_signatures: [
      'sha256WithRSAEncryption',
      'ecdsa-with-SHA256',
      'ecdsa-with-SHA384',
      'ecdsa-with-SHA512',
    ],
    certificate_types: ['ecdsa', 'rsa'],
    ciphers_openssl: INTERMEDIATE_CIPHERS,
    ciphersuites: TLS13_SUITES,
    dh_param_size: 2048,
    ecdh_param_size: 256,
    hsts_min_age: 63072000,
    maximum_certificate_lifespan: 366,
    ocsp_staple: true,
    oldest_clients: [
      'Firefox 31.3.0',
      'Android 4.4.2',
      'Chrome 49',
      'Edge 15 on Windows 10',
      'IE 11 on Windows 10',
      'Java 8u161',
      'OpenSSL 1.0.1l',
      'Opera 20',
      'Safari 9',
    ],
    rsa_key_size: 2048,
    server_preferred_order: false,
    tls_curves: CURVES,
    tls_versions: ['TLSv1.2', 'TLSv1.3'],
  },
  old: {
    source: 'src/static/guidelines/5.8.json',
    certificate_curves: ['prime256v1', 'secp384r1'],
    certificate_signatures: ['sha256WithRSAEncryption'],
    certificate_types: ['rsa'],
    ciphers_openssl: [
      ...INTERMEDIATE_CIPHERS,
      'ECDHE-ECDSA-AES128-SHA256',
      'ECDHE-RSA-AES128-SHA256',
      'ECDHE-ECDSA-AES128-SHA',
      'ECDHE-RSA-AES128-SHA',
      'ECDHE-ECDSA-AES256-SHA384',
      'ECDHE-RSA-AES256-SHA384',
      'ECDHE-ECDSA-AES256-SHA',
      'ECDHE-RSA-AES256-SHA',
      'AES128-GCM-SHA256',
      'AES256-GCM-SHA384',
      'AES128-SHA256',
      'AES256-SHA256',
      'AES128-SHA',
      'AES256-SHA',
      'DES-CBC3-SHA',
    ],
    ciphersuites: TLS13_SUITES,
    dh_param_size: 2048,
    ecdh_param_size: 256,
    hsts_min_age: 63072000,
    maximum_certificate_lifespan: 366,
    ocsp_staple: true,
    oldest_clients: [
      'Firefox 1',
      'Android 2.3',
      'Chrome 1',
      'Edge 12',
      'IE8 on Windows XP',
      'Java 6',
      'OpenSSL 0.9.8',
      'Opera 5',
      'Safari 1',
    ],
    rsa_key_size: 2048,
    server_preferred_order: true,
    tls_curves: CURVES,
    tls_versions: ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'],
  },
};

export const MOZILLA_LEVELS_STRICTEST_FIRST: readonly MozillaLevel[] = ['modern', 'intermediate', 'old'];
