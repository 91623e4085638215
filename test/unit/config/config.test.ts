import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULTS, FALLBACK_HELO_NAME, loadConfig } from '../../../src/config/index.js';

function errorFor(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be rejected`);
}

describe('loadConfig', () => {
  it('starts on the embedded defaults: public providers, in-process cache, frozen', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
    expect(config.trustProxy).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.dnsResolvers).toEqual([
      'https://cloudflare-dns.com/dns-query',
      'https://dns.google/dns-query',
    ]);
    expect(config.rdapAggregatorUrl).toBe('https://rdap.org');
    expect(config.crtshUrl).toBe('https://crt.sh');
    expect(config.certspotterApiKey).toBeUndefined();
    expect(config.globalDnsCountries).toHaveLength(10);
    expect(config.providerTimeoutMs).toBe(5000);
    expect(config.rateLimitGeneral).toEqual({ points: 30, seconds: 60 });
    expect(config.rateLimitExpensive).toEqual({ points: 6, seconds: 60 });
    expect(config.maxLiveProbes).toBe(128);
    expect(config.maxSmtpSessions).toBe(32);
    expect(config.messageMaxBytes).toBe(2 * 1024 * 1024);
    expect(config.sessionSecret.length).toBeGreaterThanOrEqual(32);
    expect(config.sessionSecretConfigured).toBe(false);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every variable of the contract', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: '10.0.0.0/8, 192.168.0.1',
      REDIS_URL: 'redis://127.0.0.1:6379',
      SESSION_SECRET: 's'.repeat(40),
      DNS_RESOLVERS:
        'udp://127.0.0.1:5353, tcp://127.0.0.1:5353,tls://127.0.0.1:853,https://127.0.0.1:8443/dns-query',
      DNS_ROOT_HINTS: '127.0.0.10, 2001:DB8::0:53',
      RDAP_AGGREGATOR_URL: 'https://127.0.0.1:8443/rdap/',
      RDAP_BOOTSTRAP_URL: 'https://127.0.0.1:8443/iana',
      CRTSH_URL: 'https://127.0.0.1:8443/crtsh',
      CERTSPOTTER_URL: 'https://127.0.0.1:8443/cs',
      CERTSPOTTER_API_KEY: 'k',
      GLOBALPING_URL: 'https://127.0.0.1:8443/gp',
      GLOBALPING_TOKEN: 't',
      GLOBAL_DNS_COUNTRIES: 'us,de,gb,fr,jp,au,br,za,in,sg',
      RIPESTAT_URL: 'https://127.0.0.1:8443/ripe',
      RELAY_RANGES_URL: 'https://127.0.0.1:8443/relay.csv',
      RELAY_RANGES_FILE: '/tmp/relay.csv',
      TOR_EXIT_LIST_URL: 'https://127.0.0.1:8443/tor',
      GEOIP_DB: '/tmp/geo.mmdb',
      TURNSTILE_SITE_KEY: 'site',
      TURNSTILE_SECRET_KEY: 'secret',
      TURNSTILE_VERIFY_URL: 'https://127.0.0.1:8443/siteverify',
      TURNSTILE_EXPECTED_HOSTNAME: 'netdiag.example',
      TURNSTILE_SCRIPT_URL: 'https://127.0.0.1:8443/api.js',
      PROVIDER_TIMEOUT_MS: '1500',
      WEB_CONCURRENCY: '4',
      UNSAFE_ALLOW_TARGET_CIDRS: '127.0.0.0/8,::1/128',
      CHALLENGE_EXEMPT_CIDRS: '198.51.100.0/24, 2001:db8::1',
      RATE_LIMIT_GENERAL: '100/10',
      RATE_LIMIT_EXPENSIVE: '10/10',
      MAX_LIVE_PROBES: '64',
      MAX_SMTP_SESSIONS: '8',
      MESSAGE_MAX_BYTES: '65536',
    });
    expect(config.trustProxy).toEqual(['10.0.0.0/8', '192.168.0.1']);
    expect(config.dnsResolvers).toHaveLength(4);
    expect(config.dnsRootHints).toEqual(['127.0.0.10', '2001:db8::53']);
    // A path prefix survives; only a trailing slash goes.
    expect(config.rdapAggregatorUrl).toBe('https://127.0.0.1:8443/rdap');
    expect(config.crtshUrl).toBe('https://127.0.0.1:8443/crtsh');
    expect(config.globalDnsCountries[0]).toBe('US');
    expect(config.unsafeAllowTargetCidrs).toEqual(['127.0.0.0/8', '::1/128']);
    expect(config.challengeExemptCidrs).toEqual(['198.51.100.0/24', '2001:db8::1']);
    expect(config.webConcurrency).toBe(4);
    expect(config.sessionSecretConfigured).toBe(true);
    expect(config.rateLimitGeneral).toEqual({ points: 100, seconds: 10 });
    expect(config.maxLiveProbes).toBe(64);
    expect(config.maxSmtpSessions).toBe(8);
    expect(config.messageMaxBytes).toBe(65536);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'sometimes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ REDIS_URL: 'http://127.0.0.1:6379', SESSION_SECRET: 's'.repeat(32) }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://127.0.0.1:6379' }, 'SESSION_SECRET'],
    [{ SESSION_SECRET: 'short' }, 'SESSION_SECRET'],
    [{ DNS_RESOLVERS: 'ftp://x' }, 'DNS_RESOLVERS'],
    [{ DNS_RESOLVERS: '8.8.8.8' }, 'DNS_RESOLVERS'],
    [{ DNS_RESOLVERS: ' , ' }, 'DNS_RESOLVERS'],
    [{ DNS_ROOT_HINTS: 'a.root-servers.net' }, 'DNS_ROOT_HINTS'],
    [{ DNS_ROOT_HINTS: '198.41.0.4:53' }, 'DNS_ROOT_HINTS'],
    [{ DNS_ROOT_HINTS: '[2001:503:ba3e::2:30]' }, 'DNS_ROOT_HINTS'],
    [{ DNS_ROOT_HINTS: '198.41.0.4,198.41.0.4' }, 'DNS_ROOT_HINTS'],
    [{ DNS_ROOT_HINTS: ' , ' }, 'DNS_ROOT_HINTS'],
    [{ RDAP_AGGREGATOR_URL: 'not a url' }, 'RDAP_AGGREGATOR_URL'],
    [{ CRTSH_URL: 'ftp://crt.sh' }, 'CRTSH_URL'],
    [{ CERTSPOTTER_URL: 'https://user:pw@api.certspotter.com' }, 'CERTSPOTTER_URL'],
    [{ GLOBAL_DNS_COUNTRIES: 'US,DE' }, 'GLOBAL_DNS_COUNTRIES'],
    [{ GLOBAL_DNS_COUNTRIES: 'US,DE,GB,FR,JP,AU,BR,ZA,IN,USA' }, 'GLOBAL_DNS_COUNTRIES'],
    [{ GLOBAL_DNS_COUNTRIES: 'US,US,GB,FR,JP,AU,BR,ZA,IN,SG' }, 'GLOBAL_DNS_COUNTRIES'],
    [{ PROVIDER_TIMEOUT_MS: '-1' }, 'PROVIDER_TIMEOUT_MS'],
    [{ PROVIDER_TIMEOUT_MS: '10' }, 'PROVIDER_TIMEOUT_MS'],
    [{ WEB_CONCURRENCY: '0' }, 'WEB_CONCURRENCY'],
    [{ UNSAFE_ALLOW_TARGET_CIDRS: '127.0.0.0/8,localhost' }, 'UNSAFE_ALLOW_TARGET_CIDRS'],
    [{ CHALLENGE_EXEMPT_CIDRS: '198.51.100.0/24,agents' }, 'CHALLENGE_EXEMPT_CIDRS'],
    [{ TURNSTILE_EXPECTED_HOSTNAME: 'not a host' }, 'TURNSTILE_EXPECTED_HOSTNAME'],
    [{ RATE_LIMIT_GENERAL: 'lots' }, 'RATE_LIMIT_GENERAL'],
    // Issue 16: each worker would hold its own budgets and cookie key.
    [{ WEB_CONCURRENCY: '3' }, 'WEB_CONCURRENCY'],
    // Issue 16: /api/providers published a resolver URL with its password.
    [{ DNS_RESOLVERS: 'https://u:S3cretPass@doh.example/dns-query' }, 'DNS_RESOLVERS'],
    [{ DNS_RESOLVERS: 'tls://user@dot.example:853' }, 'DNS_RESOLVERS'],
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ MAX_CONNECTIONS_PER_IP: '-1' }, 'MAX_CONNECTIONS_PER_IP'],
    [{ METRICS_PORT: '8080' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    // Issue 29 F2: a bound of none is no bound; an SMTP bound above the live-probe bound is never reached.
    [{ MAX_LIVE_PROBES: '0' }, 'MAX_LIVE_PROBES'],
    [{ MAX_SMTP_SESSIONS: 'many' }, 'MAX_SMTP_SESSIONS'],
    [{ MAX_SMTP_SESSIONS: '200' }, 'MAX_SMTP_SESSIONS'],
    [{ MESSAGE_MAX_BYTES: '100' }, 'MESSAGE_MAX_BYTES'],
    [{ MESSAGE_MAX_BYTES: '2MiB' }, 'MESSAGE_MAX_BYTES'],
    [{ PUBLIC_ORIGIN: 'netdiag.example' }, 'PUBLIC_ORIGIN'],
    [{ PUBLIC_ORIGIN: 'ftp://netdiag.example' }, 'PUBLIC_ORIGIN'],
    [{ PUBLIC_ORIGIN: 'https://netdiag.example/app' }, 'PUBLIC_ORIGIN'],
    [{ PUBLIC_ORIGIN: 'https://netdiag.example/?' }, 'PUBLIC_ORIGIN'],
    [{ PUBLIC_ORIGIN: 'https://ops:pw@netdiag.example' }, 'PUBLIC_ORIGIN'],
    [{ MCP_ALLOWED_ORIGINS: 'https://a.example,agents' }, 'MCP_ALLOWED_ORIGINS'],
    [{ MCP_ALLOWED_ORIGINS: ' , ' }, 'MCP_ALLOWED_ORIGINS'],
    [{ MCP_ALLOWED_ORIGINS: 'https://a.example/mcp' }, 'MCP_ALLOWED_ORIGINS'],
    [{ SMTP_HELO_NAME: 'not a host' }, 'SMTP_HELO_NAME'],
  ])('rejects %o naming %s', (env, variable) => {
    const err = errorFor(env as Record<string, string>);
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
  });

  it('takes WEB_CONCURRENCY above 1 with REDIS_URL and SESSION_SECRET', () => {
    const config = loadConfig({
      WEB_CONCURRENCY: '3',
      REDIS_URL: 'redis://127.0.0.1:6379',
      SESSION_SECRET: 'x'.repeat(32),
    });
    expect(config.webConcurrency).toBe(3);
  });

  it('never echoes a resolver password in its error', () => {
    expect(errorFor({ DNS_RESOLVERS: 'https://u:S3cretPass@doh.example/dns-query' }).message).not.toContain(
      'S3cretPass',
    );
  });

  // Issue 29 F7: /mcp trusted any Origin naming the request's own Host (DNS rebinding).
  it('F7: reads PUBLIC_ORIGIN and MCP_ALLOWED_ORIGINS as origins a browser sends, loopback only when neither is set', () => {
    expect(loadConfig({}).publicOrigin).toBeUndefined();
    expect(loadConfig({ PORT: '9000' }).mcpAllowedOrigins).toEqual([
      'http://localhost:9000',
      'http://127.0.0.1:9000',
      'http://[::1]:9000',
    ]);
    const pub = loadConfig({ PUBLIC_ORIGIN: 'HTTPS://NetDiag.Example:443/' });
    expect(pub.publicOrigin).toBe('https://netdiag.example');
    expect(pub.mcpAllowedOrigins).toEqual(['https://netdiag.example']);
    const listed = loadConfig({
      PUBLIC_ORIGIN: 'https://netdiag.example',
      MCP_ALLOWED_ORIGINS: 'https://agents.example:8443, http://127.0.0.1:6274,https://agents.example:8443',
    });
    // The list replaces the default: the public origin is allowed only if listed.
    expect(listed.mcpAllowedOrigins).toEqual(['https://agents.example:8443', 'http://127.0.0.1:6274']);
    expect(errorFor({ PUBLIC_ORIGIN: 'https://ops:S3cretPass@netdiag.example' }).message).not.toContain(
      'S3cretPass',
    );
  });

  // Issue 29: the EHLO name was the machine's host name, told to every MX probed.
  it('never greets a mail server with the machine name: SMTP_HELO_NAME, else the public host, else netdiag.invalid', () => {
    expect(loadConfig({}).smtpHeloName).toBe(FALLBACK_HELO_NAME);
    expect(FALLBACK_HELO_NAME).toBe('netdiag.invalid');
    expect(loadConfig({}).smtpHeloName).not.toBe(hostname());
    expect(loadConfig({ PUBLIC_ORIGIN: 'https://netdiag.example:8443' }).smtpHeloName).toBe(
      'netdiag.example',
    );
    expect(
      loadConfig({ PUBLIC_ORIGIN: 'https://netdiag.example', SMTP_HELO_NAME: 'mx-probe.netdiag.example' })
        .smtpHeloName,
    ).toBe('mx-probe.netdiag.example');
    // An address is no name to greet with.
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://203.0.113.5:8080' }).smtpHeloName).toBe(FALLBACK_HELO_NAME);
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://[2001:db8::5]' }).smtpHeloName).toBe(FALLBACK_HELO_NAME);
  });

  it('starts iterative resolution at the 13 root servers, IPv4 and IPv6, unless DNS_ROOT_HINTS says otherwise', () => {
    const hints = loadConfig({}).dnsRootHints;
    expect(hints).toHaveLength(26);
    // a.root-servers.net, and b's addresses since its renumbering (named.root, 2023-11-27).
    expect(hints).toContain('198.41.0.4');
    expect(hints).toContain('2001:503:ba3e::2:30');
    expect(hints).toContain('170.247.170.2');
    expect(hints).toContain('2801:1b8:10::b');
    expect(hints).not.toContain('199.9.14.201');
  });

  it('serves metrics nowhere unless METRICS_PORT is set, and on loopback when it is', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
    });
  });

  it('documents every variable it reads in docs/configuration.md', async () => {
    const { readFile } = await import('node:fs/promises');
    const doc = await readFile(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    const source = await readFile(new URL('../../../src/config/index.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]));
    for (const name of Object.keys(DEFAULTS)) read.add(name);
    read.delete('PATH');
    expect(read.size).toBeGreaterThan(25);
    for (const name of read) expect(doc, name).toContain(`\`${name}\``);
  });
});

describe('server start-up', () => {
  it('stops with one clear line naming a bad variable, no stack trace', () => {
    const result = spawnSync(process.execPath, ['dist/server.js'], {
      env: { PATH: process.env.PATH, PORT: 'not-a-port' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('npm warn'));
    expect(lines).toEqual(['netdiag: invalid configuration: PORT: must be an integer, got "not-a-port"']);
  });
});
