/**
 * Fixture zones for the fake DNS server, with records of every type the
 * client models. Names are under the reserved `.test` TLD and `example.com`
 * (RFC 2606), addresses in the documentation ranges 192.0.2.0/24 and
 * 2001:db8::/32 (RFC 5737, RFC 3849).
 *
 * Record `data` uses dns-packet's shapes (MX `{preference, exchange}`, TXT
 * an array of character-strings, ...) so the fake hands it to the encoder
 * as is; types dns-packet does not know (HTTPS) carry raw rdata bytes.
 */

export interface FakeRecord {
  /** Absolute owner name, no trailing dot. */
  name: string;
  /** A record type, or TIMEOUT: queries for the types this name has no record of are never answered. */
  type: string;
  /** Default: the zone's `ttl`. */
  ttl?: number;
  data: unknown;
}

export interface FakeSoa {
  ttl: number;
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

export interface FakeZone {
  origin: string;
  /** Default TTL of the zone's records. */
  ttl: number;
  soa: FakeSoa;
  records: FakeRecord[];
  /** Answers from this zone carry AD=1 (as if the resolver had validated them), unless overridden globally. */
  ad?: boolean;
}

export interface TestZoneOptions {
  /** The records' default TTL, and the SOA's own unless `soa.ttl` says otherwise. Default 60. */
  ttl?: number;
  /** Fields of the SOA to change; the rest are those `testZone` documents. */
  soa?: Partial<FakeSoa>;
  ad?: boolean;
}

/**
 * A zone for a test, with the SOA no test looks at: `ns.<origin>`, `hostmaster.<origin>`,
 * serial 1, a 60 s negative-answer TTL (RFC 2308 §5). Tests that do read the SOA use the
 * fixture zones below, whose values are spelled out.
 *
 *   testZone('site.test', [{ name: 'www.site.test', type: 'A', data: target.address }])
 */
export function testZone(origin: string, records: FakeRecord[], opts: TestZoneOptions = {}): FakeZone {
  const ttl = opts.ttl ?? 60;
  return {
    origin,
    ttl,
    soa: {
      ttl,
      mname: `ns.${origin}`,
      rname: `hostmaster.${origin}`,
      serial: 1,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: 60,
      ...opts.soa,
    },
    records,
    ...(opts.ad === undefined ? {} : { ad: opts.ad }),
  };
}

/**
 * Text as TXT character-strings of at most 255 bytes (RFC 1035 §3.3), the way zone
 * tools split a long record; an empty text is one empty string.
 */
export function characterStrings(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 255) out.push(text.slice(i, i + 255));
  return out.length > 0 ? out : [''];
}

/** A 2048-bit-looking DKIM key: long enough that it must be split into several character-strings. */
const DKIM_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtestkey0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ' +
  '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP' +
  'QRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFG' +
  'HIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzIDAQAB';

/**
 * The long TXT as character-strings of at most 255 bytes (RFC 1035 §3.3), the
 * way zone tools split it. Frozen: dns-packet's TXT encoder replaces strings
 * with Buffers in the array it is given, so encoders must get a copy.
 */
export const LONG_TXT_STRINGS: readonly string[] = Object.freeze(
  characterStrings(`v=DKIM1; k=rsa; p=${DKIM_KEY}`),
);

/**
 * RFC 9460 wire rdata of `1 . alpn=h2,h3 ipv4hint=192.0.2.10 ipv6hint=2001:db8::10`,
 * hand-encoded because dns-packet has no HTTPS codec.
 */
export const HTTPS_RDATA = Buffer.from([
  ...[0x00, 0x01], // SvcPriority 1
  0x00, // TargetName "." (root)
  ...[0x00, 0x01, 0x00, 0x06, 0x02, 0x68, 0x32, 0x02, 0x68, 0x33], // alpn=h2,h3
  ...[0x00, 0x04, 0x00, 0x04, 192, 0, 2, 10], // ipv4hint=192.0.2.10
  ...[0x00, 0x06, 0x00, 0x10, 0x20, 0x01, 0x0d, 0xb8, ...new Array<number>(11).fill(0), 0x10], // ipv6hint=2001:db8::10
]);

/** An ECDSA P-256 (algorithm 13) key-signing key; the bytes are arbitrary, only the format matters. */
export const DNSKEY_PUBLIC = Buffer.from(
  'mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
  'base64',
);

const exampleTest: FakeZone = {
  origin: 'example.test',
  ttl: 300,
  soa: {
    ttl: 3600,
    mname: 'ns1.example.test',
    rname: 'hostmaster.example.test',
    serial: 2024060101,
    refresh: 7200,
    retry: 3600,
    expire: 1209600,
    minimum: 60,
  },
  records: [
    { name: 'example.test', type: 'NS', ttl: 3600, data: 'ns1.example.test' },
    { name: 'example.test', type: 'NS', ttl: 3600, data: 'ns2.example.test' },
    { name: 'example.test', type: 'A', data: '192.0.2.10' },
    { name: 'example.test', type: 'AAAA', data: '2001:db8::10' },
    { name: 'example.test', type: 'MX', data: { preference: 10, exchange: 'mail.example.test' } },
    { name: 'example.test', type: 'MX', data: { preference: 20, exchange: 'mail2.example.test' } },
    { name: 'example.test', type: 'TXT', data: ['v=spf1 ip4:192.0.2.0/24 -all'] },
    { name: 'example.test', type: 'CAA', data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
    {
      name: 'example.test',
      type: 'CAA',
      data: { flags: 0, tag: 'iodef', value: 'mailto:security@example.test' },
    },
    // An unknown property marked critical: a CA must refuse to issue (RFC 8659 §4.1).
    { name: 'example.test', type: 'CAA', data: { flags: 128, tag: 'tbs', value: 'unknown' } },
    { name: 'example.test', type: 'UNKNOWN_65', data: HTTPS_RDATA },
    {
      name: 'example.test',
      type: 'DNSKEY',
      ttl: 3600,
      data: { flags: 257, algorithm: 13, key: DNSKEY_PUBLIC },
    },
    {
      name: 'example.test',
      type: 'DS',
      ttl: 3600,
      data: { keyTag: 2371, algorithm: 13, digestType: 2, digest: Buffer.alloc(32, 0xab) },
    },
    { name: 'ns1.example.test', type: 'A', data: '192.0.2.53' },
    { name: 'ns2.example.test', type: 'A', data: '192.0.2.54' },
    { name: 'mail.example.test', type: 'A', data: '192.0.2.25' },
    { name: 'mail2.example.test', type: 'A', data: '192.0.2.26' },
    // CNAME chain: www → alias → addresses.
    { name: 'www.example.test', type: 'CNAME', ttl: 600, data: 'alias.example.test' },
    { name: 'alias.example.test', type: 'A', ttl: 120, data: '192.0.2.20' },
    { name: 'alias.example.test', type: 'AAAA', ttl: 120, data: '2001:db8::20' },
    // A chain that leaves the zone and ends in another (signed) one.
    { name: 'shop.example.test', type: 'CNAME', ttl: 900, data: 'shop.example.com' },
    // A chain whose target does not exist (RFC 6604: the rcode is NXDOMAIN).
    { name: 'dangling.example.test', type: 'CNAME', ttl: 900, data: 'gone.example.test' },
    { name: 'long.example.test', type: 'TXT', data: LONG_TXT_STRINGS },
    { name: 'selector1._domainkey.example.test', type: 'TXT', data: LONG_TXT_STRINGS },
    { name: '_dmarc.example.test', type: 'TXT', data: ['v=DMARC1; p=reject; rua=mailto:dmarc@example.test'] },
    // Several TXT records and strings with characters that presentation must escape.
    { name: 'quotes.example.test', type: 'TXT', data: ['say "hi"', 'back\\slash'] },
    {
      name: '_sip._tcp.example.test',
      type: 'SRV',
      ttl: 600,
      data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' },
    },
    {
      name: '_sip._tcp.example.test',
      type: 'SRV',
      ttl: 600,
      data: { priority: 20, weight: 0, port: 5060, target: 'sip2.example.test' },
    },
    { name: 'sip.example.test', type: 'A', data: '192.0.2.60' },
    // Enough data that a UDP answer cannot fit in 1232 bytes: the server must truncate it.
    ...Array.from({ length: 24 }, (_, i) => ({
      name: 'big.example.test',
      type: 'TXT',
      data: [`record ${String(i).padStart(2, '0')} ${'x'.repeat(80)}`],
    })),
    // A deliberately short TTL, for cache expiry tests.
    { name: 'short.example.test', type: 'A', ttl: 5, data: '192.0.2.5' },
  ],
};

const exampleCom: FakeZone = {
  origin: 'example.com',
  ttl: 3600,
  ad: true,
  soa: {
    ttl: 3600,
    mname: 'ns.example.com',
    rname: 'noc.example.com',
    serial: 2024060102,
    refresh: 7200,
    retry: 3600,
    expire: 1209600,
    minimum: 600,
  },
  records: [
    { name: 'example.com', type: 'NS', data: 'ns.example.com' },
    { name: 'example.com', type: 'A', data: '192.0.2.80' },
    { name: 'example.com', type: 'AAAA', data: '2001:db8::80' },
    { name: 'example.com', type: 'MX', data: { preference: 0, exchange: '.' } },
    { name: 'example.com', type: 'TXT', data: ['v=spf1 -all'] },
    { name: 'ns.example.com', type: 'A', data: '192.0.2.81' },
    { name: 'www.example.com', type: 'A', data: '192.0.2.80' },
    { name: 'shop.example.com', type: 'A', ttl: 60, data: '192.0.2.90' },
  ],
};

/** Reverse zone for 192.0.2.0/24 (RFC 1035 §3.5). */
const reverseV4: FakeZone = {
  origin: '2.0.192.in-addr.arpa',
  ttl: 3600,
  soa: { ...exampleTest.soa, mname: 'ns1.example.test' },
  records: [
    { name: '10.2.0.192.in-addr.arpa', type: 'PTR', data: 'example.test' },
    { name: '25.2.0.192.in-addr.arpa', type: 'PTR', data: 'mail.example.test' },
  ],
};

/** Reverse zone for 2001:db8::/32 (RFC 3596 §2.5). */
const reverseV6: FakeZone = {
  origin: '8.b.d.0.1.0.0.2.ip6.arpa',
  ttl: 3600,
  soa: { ...exampleTest.soa, mname: 'ns1.example.test' },
  records: [{ name: ip6ArpaName('2001:db8::10'), type: 'PTR', data: 'example.test' }],
};

/** The ip6.arpa name of an IPv6 address: 32 reversed nibbles. */
export function ip6ArpaName(address: string): string {
  const [head = '', tail = ''] = address.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const full = [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const nibbles = full.map((g) => g.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}

export const DEFAULT_ZONES: readonly FakeZone[] = [exampleTest, exampleCom, reverseV4, reverseV6];
