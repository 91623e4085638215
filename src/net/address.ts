/**
 * Address classification for outbound safety (docs/architecture.md §3): is this IP
 * a public destination the service may connect to on a user's behalf?
 *
 * Everything is decided on the address BITS. Text is parsed to bytes by our
 * own parsers and compared against prefixes here; no third-party range names
 * are trusted (ipaddr.js calls `::7f00:1` plain "unicast" and parses
 * `::127.0.0.1` into the bytes of `::ffff:127.0.0.1`; the `ip` and
 * `private-ip` packages have known bypasses and are not used).
 *
 * Sources, both cited block by block in the tables below:
 *  - IANA IPv4 Special-Purpose Address Registry (RFC 6890, RFC 8190)
 *    https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry.xhtml
 *  - IANA IPv6 Special-Purpose Address Registry (RFC 6890, RFC 8190)
 *    https://www.iana.org/assignments/iana-ipv6-special-registry/iana-ipv6-special-registry.xhtml
 *  plus space outside those registries: IPv4 multicast 224.0.0.0/4 (RFC 5771,
 *  https://www.iana.org/assignments/multicast-addresses/), IPv6 multicast
 *  ff00::/8 (RFC 4291 §2.7), and the IANA IPv6 Address Space registry
 *  (https://www.iana.org/assignments/ipv6-address-space/), in which only
 *  2000::/3 is global unicast: anything else not listed is "reserved".
 *
 * Policy: every block listed in either registry is non-public, INCLUDING the
 * ones the registry marks "Globally Reachable: True" (192.0.0.9, 192.0.0.10,
 * AS112, AMT, 2001:1::1..3, ORCHIDv2, DETs, 2620:4f:8000::/48). Those are
 * anycast service addresses whose nearest instance may well sit inside the
 * network this service runs in (a PCP or TURN server is usually the local
 * CGN/edge, AS112 nodes are often run by the hosting ISP), or identifiers that
 * are not locators at all (ORCHIDv2, DETs). No website a user could want to
 * inspect lives there, so refusing them costs nothing. The one exception is
 * where an IPv4 address is embedded: the well-known NAT64 prefix
 * 64:ff9b::/96, IPv4-mapped addresses, 6to4 and Teredo are classified by
 * the embedded IPv4 address(es), since that is where a packet ends up.
 *
 * Why one file: the registries' tables and the parsers that turn every text
 * spelling into the bits they are checked against are one safety decision;
 * split, a parser could drift from the table it feeds. The strict address
 * grammar itself is ip-text.ts, shared with the IP data's range tables, so
 * what the classifier and those tables accept as an address is one thing.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { UnsafeTargetError } from './errors.js';
import { formatIPv6Groups, ipv4Number, ipv6Groups } from './ip-text.js';

/**
 * node:net's syntax checks, for code outside net/ and providers/, which does
 * not import node:net itself. They accept an IPv6 zone id (`fe80::1%eth0`) and
 * no other spelling than dotted-quad IPv4; parseHostLiteral reads the others.
 */
export { isIP, isIPv4, isIPv6 };

export interface AddressClass {
  /** True only for a globally routable unicast destination this service may connect to. */
  public: boolean;
  /**
   * The block's name: 'public', 'loopback', 'private-use', ... For embedded
   * IPv4 it names the wrapper and the embedded address's class, e.g.
   * 'ipv4-mapped → loopback'.
   */
  range: string;
  /** Where the block is defined, e.g. 'RFC 1918'. Absent for plain public space. */
  rfc?: string;
  /** The registry block that matched, e.g. '10.0.0.0/8'. Absent for plain public space. */
  block?: string;
  /** The embedded IPv4 address(es) that decided the class (IPv4-mapped, NAT64, 6to4, Teredo, ...). */
  embedded?: string[];
}

/** How a block that carries an IPv4 address inside an IPv6 address is judged. */
type EmbeddedRule = {
  extract: (bytes: Uint8Array) => Uint8Array[];
  /** 'inherit': public iff every embedded address is public. 'never': always non-public, embedded shown for information. */
  mode: 'inherit' | 'never';
  /** Labels for several embedded addresses (Teredo: server, client). */
  labels?: string[];
};

interface BlockSpec {
  cidr: string;
  range: string;
  rfc: string;
  /** The registry's "Globally Reachable" column where it says True; kept for the record (see the policy above). */
  globallyReachable?: true;
  embedded?: EmbeddedRule;
}

interface Block extends BlockSpec {
  prefix: Uint8Array;
  bits: number;
}

// IANA IPv4 Special-Purpose Address Registry (every row, registry names in the comments), plus multicast.
const IPV4_SPECS: readonly BlockSpec[] = [
  { cidr: '0.0.0.0/8', range: 'this-network', rfc: 'RFC 791 §3.2' }, // "This network"
  { cidr: '0.0.0.0/32', range: 'this-host', rfc: 'RFC 1122 §3.2.1.3' }, // "This host on this network"
  { cidr: '10.0.0.0/8', range: 'private-use', rfc: 'RFC 1918' }, // Private-Use
  { cidr: '100.64.0.0/10', range: 'shared-address-space (CGNAT)', rfc: 'RFC 6598' }, // Shared Address Space
  { cidr: '127.0.0.0/8', range: 'loopback', rfc: 'RFC 1122 §3.2.1.3' }, // Loopback
  { cidr: '169.254.0.0/16', range: 'link-local', rfc: 'RFC 3927' }, // Link Local (cloud metadata lives here)
  { cidr: '172.16.0.0/12', range: 'private-use', rfc: 'RFC 1918' }, // Private-Use
  // IETF Protocol Assignments: "not usable unless by virtue of a more specific reservation".
  { cidr: '192.0.0.0/24', range: 'ietf-protocol-assignments', rfc: 'RFC 6890 §2.1' },
  { cidr: '192.0.0.0/29', range: 'ipv4-service-continuity', rfc: 'RFC 7335' }, // IPv4 Service Continuity Prefix
  { cidr: '192.0.0.8/32', range: 'ipv4-dummy', rfc: 'RFC 7600' }, // IPv4 dummy address
  { cidr: '192.0.0.9/32', range: 'pcp-anycast', rfc: 'RFC 7723', globallyReachable: true }, // Port Control Protocol Anycast
  { cidr: '192.0.0.10/32', range: 'turn-anycast', rfc: 'RFC 8155', globallyReachable: true }, // TURN Anycast
  { cidr: '192.0.0.170/32', range: 'nat64-dns64-discovery', rfc: 'RFC 8880, RFC 7050 §2.2' }, // NAT64/DNS64 Discovery
  { cidr: '192.0.0.171/32', range: 'nat64-dns64-discovery', rfc: 'RFC 8880, RFC 7050 §2.2' },
  { cidr: '192.0.2.0/24', range: 'documentation', rfc: 'RFC 5737' }, // Documentation (TEST-NET-1)
  { cidr: '192.31.196.0/24', range: 'as112', rfc: 'RFC 7535', globallyReachable: true }, // AS112-v4
  { cidr: '192.52.193.0/24', range: 'amt', rfc: 'RFC 7450', globallyReachable: true }, // AMT
  { cidr: '192.88.99.0/24', range: 'deprecated (6to4 relay anycast)', rfc: 'RFC 7526' }, // terminated 2015-03
  { cidr: '192.88.99.2/32', range: '6a44-relay-anycast', rfc: 'RFC 6751' }, // 6a44-relay anycast address
  { cidr: '192.168.0.0/16', range: 'private-use', rfc: 'RFC 1918' }, // Private-Use
  // Direct Delegation AS112 Service
  { cidr: '192.175.48.0/24', range: 'as112 (direct delegation)', rfc: 'RFC 7534', globallyReachable: true },
  { cidr: '198.18.0.0/15', range: 'benchmarking', rfc: 'RFC 2544' }, // Benchmarking
  { cidr: '198.51.100.0/24', range: 'documentation', rfc: 'RFC 5737' }, // Documentation (TEST-NET-2)
  { cidr: '203.0.113.0/24', range: 'documentation', rfc: 'RFC 5737' }, // Documentation (TEST-NET-3)
  // Not in the special-purpose registry: the multicast space (IANA IPv4 Multicast Address Space registry).
  { cidr: '224.0.0.0/4', range: 'multicast', rfc: 'RFC 5771' },
  { cidr: '240.0.0.0/4', range: 'reserved', rfc: 'RFC 1112 §4' }, // Reserved
  { cidr: '255.255.255.255/32', range: 'limited-broadcast', rfc: 'RFC 8190, RFC 919 §7' }, // Limited Broadcast
];

/** The low 32 bits: IPv4-mapped, IPv4-compatible, SIIT and the /96 NAT64 prefix (RFC 6052 §2.2). */
const last32 = (b: Uint8Array): Uint8Array[] => [b.subarray(12, 16)];

// IANA IPv6 Special-Purpose Address Registry (every row), plus the parts of the
// IPv6 Address Space registry that have a name of their own.
const IPV6_SPECS: readonly BlockSpec[] = [
  { cidr: '::/128', range: 'unspecified', rfc: 'RFC 4291 §2.5.2' }, // Unspecified Address
  { cidr: '::1/128', range: 'loopback', rfc: 'RFC 4291 §2.5.3' }, // Loopback Address
  // Not in the registry: deprecated IPv4-compatible addresses; never routed, so never public.
  {
    cidr: '::/96',
    range: 'ipv4-compatible (deprecated)',
    rfc: 'RFC 4291 §2.5.5.1',
    embedded: { extract: last32, mode: 'never' },
  },
  // IPv4-mapped Address: a socket connects to the embedded IPv4 address.
  {
    cidr: '::ffff:0:0/96',
    range: 'ipv4-mapped',
    rfc: 'RFC 4291 §2.5.5.2',
    embedded: { extract: last32, mode: 'inherit' },
  },
  // Not in the registry: SIIT's IPv4-translated addresses (inside ::/8, reserved by the IETF).
  {
    cidr: '::ffff:0:0:0/96',
    range: 'ipv4-translated (SIIT)',
    rfc: 'RFC 2765 §2.1',
    embedded: { extract: last32, mode: 'never' },
  },
  // IPv4-IPv6 Translat. (well-known NAT64 prefix; Globally Reachable: True): judged by the embedded address.
  {
    cidr: '64:ff9b::/96',
    range: 'nat64',
    rfc: 'RFC 6052',
    globallyReachable: true,
    embedded: { extract: last32, mode: 'inherit' },
  },
  // IPv4-IPv6 Translat. (local-use prefix, Globally Reachable: False). RFC 6052 §2.2 layout for a /48:
  // IPv4 bits 0-15 in address bits 48-63, bits 64-71 are the zero "u" octet, IPv4 bits 16-31 in 72-87.
  {
    cidr: '64:ff9b:1::/48',
    range: 'nat64 local-use',
    rfc: 'RFC 8215',
    embedded: { extract: (b) => [Uint8Array.of(b[6]!, b[7]!, b[9]!, b[10]!)], mode: 'never' },
  },
  { cidr: '100::/64', range: 'discard-only', rfc: 'RFC 6666' }, // Discard-Only Address Block
  { cidr: '100:0:0:1::/64', range: 'dummy-prefix', rfc: 'RFC 9780' }, // Dummy IPv6 Prefix
  // IETF Protocol Assignments: not globally reachable "unless allowed by a more specific allocation".
  { cidr: '2001::/23', range: 'ietf-protocol-assignments', rfc: 'RFC 2928' },
  // TEREDO (RFC 4380 §4): server IPv4 in bits 32-63; client IPv4 in bits 96-127, every bit inverted.
  {
    cidr: '2001::/32',
    range: 'teredo',
    rfc: 'RFC 4380',
    embedded: {
      extract: (b) => [b.subarray(4, 8), b.subarray(12, 16).map((x) => x ^ 0xff)],
      mode: 'inherit',
      labels: ['server', 'client'],
    },
  },
  { cidr: '2001:1::1/128', range: 'pcp-anycast', rfc: 'RFC 7723', globallyReachable: true }, // PCP Anycast
  { cidr: '2001:1::2/128', range: 'turn-anycast', rfc: 'RFC 8155', globallyReachable: true }, // TURN Anycast
  // DNS-SD Service Registration Protocol Anycast
  { cidr: '2001:1::3/128', range: 'dns-sd-srp-anycast', rfc: 'RFC 9665', globallyReachable: true },
  { cidr: '2001:2::/48', range: 'benchmarking', rfc: 'RFC 5180' }, // Benchmarking
  { cidr: '2001:3::/32', range: 'amt', rfc: 'RFC 7450', globallyReachable: true }, // AMT
  { cidr: '2001:4:112::/48', range: 'as112', rfc: 'RFC 7535', globallyReachable: true }, // AS112-v6
  { cidr: '2001:10::/28', range: 'deprecated (orchid)', rfc: 'RFC 4843' }, // Deprecated (previously ORCHID)
  { cidr: '2001:20::/28', range: 'orchidv2', rfc: 'RFC 7343', globallyReachable: true }, // ORCHIDv2
  // Drone Remote ID Protocol Entity Tags (DETs) Prefix
  { cidr: '2001:30::/28', range: 'drone-remote-id (DET)', rfc: 'RFC 9374', globallyReachable: true },
  { cidr: '2001:db8::/32', range: 'documentation', rfc: 'RFC 3849' }, // Documentation
  // 6to4: the site's IPv4 address in bits 16-47 (RFC 3056 §2).
  {
    cidr: '2002::/16',
    range: '6to4',
    rfc: 'RFC 3056',
    embedded: { extract: (b) => [b.subarray(2, 6)], mode: 'inherit' },
  },
  // Direct Delegation AS112 Service
  { cidr: '2620:4f:8000::/48', range: 'as112 (direct delegation)', rfc: 'RFC 7534', globallyReachable: true },
  { cidr: '3fff::/20', range: 'documentation', rfc: 'RFC 9637' }, // Documentation
  { cidr: '5f00::/16', range: 'segment-routing (SRv6 SIDs)', rfc: 'RFC 9602' }, // Segment Routing (SRv6) SIDs
  { cidr: 'fc00::/7', range: 'unique-local', rfc: 'RFC 4193' }, // Unique-Local
  { cidr: 'fe80::/10', range: 'link-local', rfc: 'RFC 4291 §2.5.6' }, // Link-Local Unicast
  // Not in the special-purpose registry: the rest of the IPv6 Address Space registry worth naming.
  { cidr: 'fec0::/10', range: 'site-local (deprecated)', rfc: 'RFC 3879' },
  { cidr: 'ff00::/8', range: 'multicast', rfc: 'RFC 4291 §2.7' },
];

/** 2000::/3, the only global unicast space (RFC 4291 §2.4; IANA IPv6 Address Space registry). */
const GLOBAL_UNICAST_V6 = { prefix: Uint8Array.of(0x20), bits: 3 };

function compile(specs: readonly BlockSpec[]): Block[] {
  return specs
    .map((spec) => {
      const parsed = parseCidr(spec.cidr);
      if (!parsed) throw new Error(`bad CIDR in the address table: ${spec.cidr}`);
      return { ...spec, prefix: parsed.bytes, bits: parsed.bits };
    })
    .sort((a, b) => b.bits - a.bits); // longest prefix first: the most specific entry wins
}

const IPV4_BLOCKS = compile(IPV4_SPECS);
const IPV6_BLOCKS = compile(IPV6_SPECS);

/**
 * Classifies one IP address given as text (dotted-quad IPv4 or any valid
 * IPv6 form, no brackets, no zone id). Throws TypeError for anything else:
 * callers turn user input into an address with parseHostLiteral first.
 */
export function classifyAddress(ip: string): AddressClass {
  const bytes = parseIpBytes(ip);
  if (!bytes) throw new TypeError(`not an IP address: ${ip}`);
  return classifyBytes(bytes);
}

function classifyBytes(bytes: Uint8Array): AddressClass {
  if (bytes.length === 4) {
    const block = longestMatch(IPV4_BLOCKS, bytes);
    return block ? describe(block) : { public: true, range: 'public' };
  }
  const block = longestMatch(IPV6_BLOCKS, bytes);
  if (block?.embedded) return classifyEmbedded(block, block.embedded, bytes);
  if (block) return describe(block);
  if (!matches(GLOBAL_UNICAST_V6.prefix, GLOBAL_UNICAST_V6.bits, bytes)) {
    return { public: false, range: 'reserved', rfc: 'RFC 4291 §2.4', block: 'outside 2000::/3' };
  }
  return { public: true, range: 'public' };
}

function describe(block: Block): AddressClass {
  return { public: false, range: block.range, rfc: block.rfc, block: block.cidr };
}

function classifyEmbedded(block: Block, rule: EmbeddedRule, bytes: Uint8Array): AddressClass {
  const inner = rule.extract(bytes).map((v4) => ({ address: formatIPv4(v4), cls: classifyBytes(v4) }));
  const embedded = inner.map((i) => i.address);
  const nonPublic = inner.map((i, n) => ({ ...i, label: rule.labels?.[n] })).filter((i) => !i.cls.public);
  if (rule.mode === 'inherit' && nonPublic.length === 0) {
    return { public: true, range: block.range, rfc: block.rfc, block: block.cidr, embedded };
  }
  // Name the embedded address that makes it non-public (or, for 'never' blocks, the embedded class).
  const shown = nonPublic.length > 0 ? nonPublic : inner.map((i) => ({ ...i, label: undefined }));
  const what = shown.map((i) => (i.label ? `${i.label} ${i.cls.range}` : i.cls.range)).join(', ');
  return { public: false, range: `${block.range} → ${what}`, rfc: block.rfc, block: block.cidr, embedded };
}

function longestMatch(blocks: readonly Block[], bytes: Uint8Array): Block | undefined {
  return blocks.find((b) => b.prefix.length === bytes.length && matches(b.prefix, b.bits, bytes));
}

/** Whether the first `bits` bits of `bytes` equal those of `prefix`. */
export function matches(prefix: Uint8Array, bits: number, bytes: Uint8Array): boolean {
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (prefix[i] !== bytes[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((prefix[whole] ?? 0) & mask) === ((bytes[whole] ?? 0) & mask);
}

// ---------------------------------------------------------------------------
// Operator allow-list (UNSAFE_ALLOW_TARGET_CIDRS)

interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

/** "a.b.c.d/n", "x::y/n" or a bare address (a /32 or /128). Host bits may be set; they are ignored. */
function parseCidr(cidr: string): Cidr | undefined {
  const [addr, len, ...rest] = cidr.trim().split('/');
  if (addr === undefined || rest.length > 0) return undefined;
  const bytes = parseIpBytes(addr);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (len === undefined) return { bytes, bits: max };
  if (!/^\d{1,3}$/.test(len) || Number(len) > max) return undefined;
  return { bytes, bits: Number(len) };
}

/** An IPv4-mapped IPv6 address or CIDR in its IPv4 form, so `127.0.0.0/8` covers `::ffff:127.0.0.2`. */
function unmap(c: Cidr): Cidr {
  const mapped = c.bytes.length === 16 && c.bits >= 96 && matches(MAPPED_PREFIX, 96, c.bytes);
  return mapped ? { bytes: c.bytes.slice(12), bits: c.bits - 96 } : c;
}
const MAPPED_PREFIX = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff);

/** An address's bytes, an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 bytes. */
export function unmapIp(bytes: Uint8Array): Uint8Array {
  return unmap({ bytes, bits: bytes.length * 8 }).bytes;
}

/**
 * Whether `ip` lies inside one of `cidrs` (the operator's
 * UNSAFE_ALLOW_TARGET_CIDRS). An IPv4-mapped address matches IPv4 CIDRs: it
 * is the same destination. Throws TypeError for an invalid CIDR (config
 * validation refuses those at start-up).
 */
export function isAllowedByCidrs(ip: string, cidrs: readonly string[]): boolean {
  const bytes = parseIpBytes(ip);
  if (!bytes || cidrs.length === 0) return false;
  const addr = unmap({ bytes, bits: bytes.length * 8 });
  return cidrs.some((text) => {
    const parsed = parseCidr(text);
    if (!parsed) throw new TypeError(`not a CIDR: ${text}`);
    const cidr = unmap(parsed);
    return cidr.bytes.length === addr.bytes.length && matches(cidr.bytes, cidr.bits, addr.bytes);
  });
}

// ---------------------------------------------------------------------------
// Parsing

/**
 * Strict text → bytes (4 or 16), by the service's one grammar (ip-text.ts):
 * dotted-quad IPv4 as node:net accepts it, or IPv6 without a zone id. An
 * IPv4-mapped address stays 16 bytes: the classifier judges the wrapper.
 */
export function parseIpBytes(ip: string): Uint8Array | undefined {
  const v4 = ipv4Number(ip);
  if (v4 >= 0) return ipv4Bytes(v4);
  const groups = ipv6Groups(ip);
  return groups && ipv6Bytes(groups);
}

function ipv4Bytes(value: number): Uint8Array {
  return Uint8Array.of(value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

function ipv6Bytes(groups: readonly number[]): Uint8Array {
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** 4 or 16 bytes → the address as text (IPv6 in RFC 5952 form). */
export function formatIpBytes(bytes: Uint8Array): string {
  return bytes.length === 4 ? formatIPv4(bytes) : formatIPv6(bytes);
}

function formatIPv4(bytes: Uint8Array): string {
  return Array.from(bytes).join('.');
}

function formatIPv6(bytes: Uint8Array): string {
  return formatIPv6Groups(Array.from({ length: 8 }, (_, i) => (bytes[i * 2]! << 8) | bytes[i * 2 + 1]!));
}

/**
 * Recognizes an IP literal in a user-supplied host the way resolver
 * libraries (inet_aton) and the WHATWG URL host parser do, and returns it in
 * canonical text (dotted quad; RFC 5952 IPv6, with an IPv4-mapped address in
 * hex like WHATWG URL writes it: `[::ffff:127.0.0.1]` → `::ffff:7f00:1`).
 * Returns undefined when the host is a name.
 *
 *   2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1, 127.1, 127.0.0.1.  → 127.0.0.1
 *   [::ffff:127.0.0.1], ::ffff:7f00:1                                → ::ffff:7f00:1
 *
 * Throws a 400 UnsafeTargetError (reason 'invalid_host') for a host that is neither a name nor a valid
 * address: one that ends in a number but is no IPv4 address (`1.2.3.256`,
 * `1.2.3.08`, `foo.1`: WHATWG URL refuses these too, and no TLD is numeric),
 * a malformed IPv6 literal, or one with a zone id (`fe80::1%eth0`).
 */
export function parseHostLiteral(host: string, param = 'target'): string | undefined {
  let h = host.trim();
  if (h.startsWith('[') || h.endsWith(']')) {
    if (!(h.startsWith('[') && h.endsWith(']')))
      throw invalidHost(param, `${host} is not a valid IPv6 literal`);
    return parseIPv6Literal(h.slice(1, -1), host, param);
  }
  if (h.includes(':')) return parseIPv6Literal(h, host, param);
  // Full-width digits and dots are mapped to ASCII by IDNA (UTS #46) before a URL parser looks for IPv4.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/[^\x00-\x7f]/.test(h)) {
    h = domainToASCII(h);
    if (h === '') throw invalidHost(param, `${host} is not a valid host name`);
  }
  h = h.toLowerCase();
  if (!endsInNumber(h)) return undefined;
  const v4 = parseIPv4Loose(h);
  if (!v4) throw invalidHost(param, `${host} is not a valid IPv4 address`);
  return formatIPv4(v4);
}

function parseIPv6Literal(inner: string, original: string, param: string): string {
  if (inner.includes('%')) throw invalidHost(param, `${original}: IPv6 zone ids are not accepted`);
  const groups = ipv6Groups(inner);
  if (!groups) throw invalidHost(param, `${original} is not a valid IPv6 address`);
  return formatIPv6Groups(groups);
}

function invalidHost(param: string, why: string): UnsafeTargetError {
  return new UnsafeTargetError('invalid_host', `${param} ${why}`);
}

/** WHATWG URL "ends in a number checker": the last label is all digits or a 0x hex number. */
function endsInNumber(host: string): boolean {
  const parts = host.split('.');
  if (parts.at(-1) === '') {
    if (parts.length === 1) return false;
    parts.pop();
  }
  const last = parts.at(-1) ?? '';
  if (/^[0-9]+$/.test(last)) return true;
  return /^0x[0-9a-f]*$/.test(last);
}

/**
 * The WHATWG URL IPv4 parser (the inet_aton rules): one to four parts, each
 * decimal, octal (leading 0) or hex (0x); the last part fills the remaining
 * bytes. `127.1` is 127.0.0.1 and `2130706433` is 127.0.0.1.
 */
function parseIPv4Loose(host: string): Uint8Array | undefined {
  const parts = host.split('.');
  if (parts.at(-1) === '' && parts.length > 1) parts.pop();
  if (parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === undefined) return undefined;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (5 - parts.length)) return undefined;
  let value = last;
  numbers.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return ipv4Bytes(value);
}

function parseIPv4Number(part: string): number | undefined {
  if (part === '') return undefined;
  let digits = part;
  let radix = 10;
  if (/^0x/.test(digits)) {
    digits = digits.slice(2);
    radix = 16;
  } else if (digits.length > 1 && digits.startsWith('0')) {
    digits = digits.slice(1);
    radix = 8;
  }
  if (digits === '') return 0;
  const valid = radix === 16 ? /^[0-9a-f]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return undefined;
  // Anything past 2^32 is refused by the caller; a long digit string only needs to compare as "too big".
  const n = Number.parseInt(digits, radix);
  return Number.isFinite(n) ? n : undefined;
}

/** The family of a canonical address, for callers that carry `{address, family}`. */
export function addressFamily(ip: string): 4 | 6 {
  return isIPv4(ip) ? 4 : 6;
}
