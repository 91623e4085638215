/**
 * The classifier table: one group per block of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (plus multicast, reserved and embedded
 * IPv4), each with its first and last address and the addresses just outside
 * where the neighbour is something else.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isAllowedByCidrs, parseHostLiteral } from '../../../src/net/address.js';
import { UnsafeTargetError } from '../../../src/net/errors.js';

type Row = [address: string, isPublic: boolean, range: string | RegExp];

const PUBLIC = 'public';

const IPV4: Row[] = [
  // 0.0.0.0/8 "This network" and 0.0.0.0/32 "This host on this network" (RFC 791, RFC 1122)
  ['0.0.0.0', false, 'this-host'],
  ['0.0.0.1', false, 'this-network'],
  ['0.255.255.255', false, 'this-network'],
  ['1.0.0.0', true, PUBLIC],
  // 10.0.0.0/8 Private-Use (RFC 1918)
  ['9.255.255.255', true, PUBLIC],
  ['10.0.0.0', false, 'private-use'],
  ['10.255.255.255', false, 'private-use'],
  ['11.0.0.0', true, PUBLIC],
  // 100.64.0.0/10 Shared Address Space (RFC 6598)
  ['100.63.255.255', true, PUBLIC],
  ['100.64.0.0', false, 'shared-address-space (CGNAT)'],
  ['100.127.255.255', false, 'shared-address-space (CGNAT)'],
  ['100.128.0.0', true, PUBLIC],
  // 127.0.0.0/8 Loopback (RFC 1122)
  ['126.255.255.255', true, PUBLIC],
  ['127.0.0.0', false, 'loopback'],
  ['127.0.0.1', false, 'loopback'],
  ['127.9.9.9', false, 'loopback'],
  ['127.255.255.255', false, 'loopback'],
  ['128.0.0.0', true, PUBLIC],
  // 169.254.0.0/16 Link Local (RFC 3927), where cloud metadata services answer
  ['169.253.255.255', true, PUBLIC],
  ['169.254.0.0', false, 'link-local'],
  ['169.254.169.254', false, 'link-local'],
  ['169.254.255.255', false, 'link-local'],
  ['169.255.0.0', true, PUBLIC],
  // 172.16.0.0/12 Private-Use (RFC 1918)
  ['172.15.255.255', true, PUBLIC],
  ['172.16.0.0', false, 'private-use'],
  ['172.31.255.255', false, 'private-use'],
  ['172.32.0.0', true, PUBLIC],
  // 192.0.0.0/24 IETF Protocol Assignments (RFC 6890) and its more specific entries
  ['191.255.255.255', true, PUBLIC],
  ['192.0.0.0', false, 'ipv4-service-continuity'], // 192.0.0.0/29 (RFC 7335)
  ['192.0.0.7', false, 'ipv4-service-continuity'],
  ['192.0.0.8', false, 'ipv4-dummy'], // RFC 7600
  ['192.0.0.9', false, 'pcp-anycast'], // RFC 7723, globally reachable per the registry: refused by policy
  ['192.0.0.10', false, 'turn-anycast'], // RFC 8155, globally reachable per the registry: refused by policy
  ['192.0.0.11', false, 'ietf-protocol-assignments'],
  ['192.0.0.169', false, 'ietf-protocol-assignments'],
  ['192.0.0.170', false, 'nat64-dns64-discovery'], // RFC 8880, RFC 7050
  ['192.0.0.171', false, 'nat64-dns64-discovery'],
  ['192.0.0.172', false, 'ietf-protocol-assignments'],
  ['192.0.0.255', false, 'ietf-protocol-assignments'],
  ['192.0.1.0', true, PUBLIC],
  // 192.0.2.0/24 Documentation TEST-NET-1 (RFC 5737)
  ['192.0.1.255', true, PUBLIC],
  ['192.0.2.0', false, 'documentation'],
  ['192.0.2.255', false, 'documentation'],
  ['192.0.3.0', true, PUBLIC],
  // 192.31.196.0/24 AS112-v4 (RFC 7535)
  ['192.31.195.255', true, PUBLIC],
  ['192.31.196.0', false, 'as112'],
  ['192.31.196.255', false, 'as112'],
  ['192.31.197.0', true, PUBLIC],
  // 192.52.193.0/24 AMT (RFC 7450)
  ['192.52.192.255', true, PUBLIC],
  ['192.52.193.0', false, 'amt'],
  ['192.52.193.255', false, 'amt'],
  ['192.52.194.0', true, PUBLIC],
  // 192.88.99.0/24 Deprecated 6to4 Relay Anycast (RFC 7526) and 192.88.99.2/32 6a44-relay anycast (RFC 6751)
  ['192.88.98.255', true, PUBLIC],
  ['192.88.99.0', false, 'deprecated (6to4 relay anycast)'],
  ['192.88.99.1', false, 'deprecated (6to4 relay anycast)'],
  ['192.88.99.2', false, '6a44-relay-anycast'],
  ['192.88.99.3', false, 'deprecated (6to4 relay anycast)'],
  ['192.88.99.255', false, 'deprecated (6to4 relay anycast)'],
  ['192.88.100.0', true, PUBLIC],
  // 192.168.0.0/16 Private-Use (RFC 1918)
  ['192.167.255.255', true, PUBLIC],
  ['192.168.0.0', false, 'private-use'],
  ['192.168.255.255', false, 'private-use'],
  ['192.169.0.0', true, PUBLIC],
  // 192.175.48.0/24 Direct Delegation AS112 Service (RFC 7534)
  ['192.175.47.255', true, PUBLIC],
  ['192.175.48.0', false, 'as112 (direct delegation)'],
  ['192.175.48.255', false, 'as112 (direct delegation)'],
  ['192.175.49.0', true, PUBLIC],
  // 198.18.0.0/15 Benchmarking (RFC 2544)
  ['198.17.255.255', true, PUBLIC],
  ['198.18.0.0', false, 'benchmarking'],
  ['198.19.255.255', false, 'benchmarking'],
  ['198.20.0.0', true, PUBLIC],
  // 198.51.100.0/24 Documentation TEST-NET-2 (RFC 5737)
  ['198.51.99.255', true, PUBLIC],
  ['198.51.100.0', false, 'documentation'],
  ['198.51.100.255', false, 'documentation'],
  ['198.51.101.0', true, PUBLIC],
  // 203.0.113.0/24 Documentation TEST-NET-3 (RFC 5737)
  ['203.0.112.255', true, PUBLIC],
  ['203.0.113.0', false, 'documentation'],
  ['203.0.113.255', false, 'documentation'],
  ['203.0.114.0', true, PUBLIC],
  // 224.0.0.0/4 Multicast (RFC 5771), 240.0.0.0/4 Reserved (RFC 1112), 255.255.255.255/32 Limited Broadcast
  ['223.255.255.255', true, PUBLIC],
  ['224.0.0.0', false, 'multicast'],
  ['239.255.255.255', false, 'multicast'],
  ['240.0.0.0', false, 'reserved'],
  ['255.255.255.254', false, 'reserved'],
  ['255.255.255.255', false, 'limited-broadcast'],
  // Public controls
  ['8.8.8.8', true, PUBLIC],
  ['1.1.1.1', true, PUBLIC],
];

const IPV6: Row[] = [
  // ::/128 Unspecified, ::1/128 Loopback (RFC 4291)
  ['::', false, 'unspecified'],
  ['::1', false, 'loopback'],
  ['0:0:0:0:0:0:0:1', false, 'loopback'],
  // ::/96 IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): never public, class of the embedded address shown
  ['::2', false, 'ipv4-compatible (deprecated) → this-network'],
  ['::7f00:1', false, 'ipv4-compatible (deprecated) → loopback'], // ipaddr.js calls this plain unicast
  ['::127.0.0.1', false, 'ipv4-compatible (deprecated) → loopback'], // ipaddr.js parses this as ::ffff:127.0.0.1
  ['::808:808', false, 'ipv4-compatible (deprecated) → public'],
  ['::ffff:ffff', false, 'ipv4-compatible (deprecated) → limited-broadcast'],
  ['::1:0:0', false, 'reserved'], // just past ::/96, still inside ::/8
  // ::ffff:0:0/96 IPv4-mapped (RFC 4291 §2.5.5.2): the embedded address decides
  ['::fffe:ffff:ffff', false, 'reserved'],
  ['::ffff:0:0', false, 'ipv4-mapped → this-host'],
  ['::ffff:127.0.0.1', false, 'ipv4-mapped → loopback'],
  ['::ffff:7f00:1', false, 'ipv4-mapped → loopback'],
  ['0:0:0:0:0:ffff:7f00:0001', false, 'ipv4-mapped → loopback'],
  ['::ffff:10.0.0.1', false, 'ipv4-mapped → private-use'],
  ['::ffff:a9fe:a9fe', false, 'ipv4-mapped → link-local'],
  ['::ffff:8.8.8.8', true, 'ipv4-mapped'],
  ['::ffff:ffff:ffff', false, 'ipv4-mapped → limited-broadcast'],
  ['::1:0:0:0', false, 'reserved'],
  // ::ffff:0:0:0/96 SIIT IPv4-translated (RFC 2765): never public
  ['::ffff:0:808:808', false, 'ipv4-translated (SIIT) → public'],
  ['::ffff:0:7f00:1', false, 'ipv4-translated (SIIT) → loopback'],
  // 64:ff9b::/96 well-known NAT64 prefix (RFC 6052): the embedded address decides
  ['64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['64:ff9b::', false, 'nat64 → this-host'],
  ['64:ff9b::8.8.8.8', true, 'nat64'],
  ['64:ff9b::808:808', true, 'nat64'],
  ['64:ff9b::127.0.0.1', false, 'nat64 → loopback'],
  ['64:ff9b::10.0.0.1', false, 'nat64 → private-use'],
  ['64:ff9b::a9fe:a9fe', false, 'nat64 → link-local'],
  ['64:ff9b::ffff:ffff', false, 'nat64 → limited-broadcast'],
  ['64:ff9b::1:0:0', false, 'reserved'],
  // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): not globally reachable, whatever it embeds
  ['64:ff9b:1::', false, /^nat64 local-use → /],
  ['64:ff9b:1:808:8:800::', false, 'nat64 local-use → public'], // 8.8.8.8 in the RFC 6052 /48 layout
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', false, /^nat64 local-use → /],
  ['64:ff9b:2::', false, 'reserved'],
  // 100::/64 Discard-Only (RFC 6666), 100:0:0:1::/64 Dummy IPv6 Prefix (RFC 9780)
  ['ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['100::', false, 'discard-only'],
  ['100::ffff:ffff:ffff:ffff', false, 'discard-only'],
  ['100:0:0:1::', false, 'dummy-prefix'],
  ['100:0:0:1:ffff:ffff:ffff:ffff', false, 'dummy-prefix'],
  ['100:0:0:2::', false, 'reserved'],
  // 2001::/23 IETF Protocol Assignments (RFC 2928) and its more specific entries
  ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['2001:1::', false, 'ietf-protocol-assignments'],
  ['2001:1::1', false, 'pcp-anycast'], // RFC 7723, globally reachable per the registry: refused by policy
  ['2001:1::2', false, 'turn-anycast'], // RFC 8155
  ['2001:1::3', false, 'dns-sd-srp-anycast'], // RFC 9665
  ['2001:1::4', false, 'ietf-protocol-assignments'],
  ['2001:2::', false, 'benchmarking'], // 2001:2::/48 (RFC 5180)
  ['2001:2:0:ffff:ffff:ffff:ffff:ffff', false, 'benchmarking'],
  ['2001:2:1::', false, 'ietf-protocol-assignments'],
  ['2001:3::', false, 'amt'], // 2001:3::/32 (RFC 7450)
  ['2001:3:ffff:ffff:ffff:ffff:ffff:ffff', false, 'amt'],
  ['2001:4:111:ffff:ffff:ffff:ffff:ffff', false, 'ietf-protocol-assignments'],
  ['2001:4:112::', false, 'as112'], // 2001:4:112::/48 (RFC 7535)
  ['2001:4:112:ffff:ffff:ffff:ffff:ffff', false, 'as112'],
  ['2001:4:113::', false, 'ietf-protocol-assignments'],
  ['2001:f:ffff:ffff:ffff:ffff:ffff:ffff', false, 'ietf-protocol-assignments'],
  ['2001:10::', false, 'deprecated (orchid)'], // 2001:10::/28 (RFC 4843)
  ['2001:1f:ffff:ffff:ffff:ffff:ffff:ffff', false, 'deprecated (orchid)'],
  ['2001:20::', false, 'orchidv2'], // 2001:20::/28 (RFC 7343)
  ['2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', false, 'orchidv2'],
  ['2001:30::', false, 'drone-remote-id (DET)'], // 2001:30::/28 (RFC 9374)
  ['2001:3f:ffff:ffff:ffff:ffff:ffff:ffff', false, 'drone-remote-id (DET)'],
  ['2001:40::', false, 'ietf-protocol-assignments'],
  ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'ietf-protocol-assignments'],
  ['2001:200::', true, PUBLIC],
  // 2001::/32 Teredo (RFC 4380): server in bits 32-63, client in the last 32 bits inverted
  ['2001::', false, 'teredo → server this-host, client limited-broadcast'],
  ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', false, 'teredo → server limited-broadcast, client this-host'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false, 'teredo → client documentation'], // RFC 4380 §4 example
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', false, 'teredo → client loopback'],
  ['2001:0:a00:1::f7f7:f7f7', false, 'teredo → server private-use'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true, 'teredo'], // server 65.54.227.120, client 8.8.8.8
  // 2001:db8::/32 Documentation (RFC 3849)
  ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['2001:db8::', false, 'documentation'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', false, 'documentation'],
  ['2001:db9::', true, PUBLIC],
  // 2002::/16 6to4 (RFC 3056): the embedded address (bits 16-47) decides
  ['2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['2002::', false, '6to4 → this-host'],
  ['2002:7f00:1::1', false, '6to4 → loopback'],
  ['2002:a9fe:a9fe::', false, '6to4 → link-local'],
  ['2002:c000:204::1', false, '6to4 → documentation'],
  ['2002:808:808::1', true, '6to4'],
  ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, '6to4 → limited-broadcast'],
  ['2003::', true, PUBLIC],
  // 2620:4f:8000::/48 Direct Delegation AS112 Service (RFC 7534)
  ['2620:4f:7fff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['2620:4f:8000::', false, 'as112 (direct delegation)'],
  ['2620:4f:8000:ffff:ffff:ffff:ffff:ffff', false, 'as112 (direct delegation)'],
  ['2620:4f:8001::', true, PUBLIC],
  // 3fff::/20 Documentation (RFC 9637)
  ['3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['3fff::', false, 'documentation'],
  ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'documentation'],
  ['3fff:1000::', true, PUBLIC],
  // 2000::/3 is the only global unicast space
  ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['2000::', true, PUBLIC],
  ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true, PUBLIC],
  ['4000::', false, 'reserved'],
  // 5f00::/16 Segment Routing (SRv6) SIDs (RFC 9602)
  ['5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['5f00::', false, 'segment-routing (SRv6 SIDs)'],
  ['5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'segment-routing (SRv6 SIDs)'],
  ['5f01::', false, 'reserved'],
  // fc00::/7 Unique-Local (RFC 4193)
  ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['fc00::', false, 'unique-local'],
  ['fd00::1', false, 'unique-local'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'unique-local'],
  ['fe00::', false, 'reserved'],
  // fe80::/10 Link-Local (RFC 4291), fec0::/10 deprecated site-local (RFC 3879), ff00::/8 multicast
  ['fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'reserved'],
  ['fe80::', false, 'link-local'],
  ['fe80::1', false, 'link-local'],
  ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'link-local'],
  ['fec0::', false, 'site-local (deprecated)'],
  ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'site-local (deprecated)'],
  ['ff00::', false, 'multicast'],
  ['ff02::1', false, 'multicast'],
  ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'multicast'],
  // Public controls
  ['2606:4700:4700::1111', true, PUBLIC],
  ['2001:4860:4860::8888', true, PUBLIC],
  ['2606:4700:4700:0000:0000:0000:0000:1111', true, PUBLIC],
];

describe('classifyAddress', () => {
  it.each([...IPV4, ...IPV6])('%s → public=%s (%s)', (address, isPublic, range) => {
    const cls = classifyAddress(address);
    expect(cls.public).toBe(isPublic);
    if (typeof range === 'string') expect(cls.range).toBe(range);
    else expect(cls.range).toMatch(range);
  });

  it('cites the registry entry of a special block', () => {
    expect(classifyAddress('10.1.2.3')).toEqual({
      public: false,
      range: 'private-use',
      rfc: 'RFC 1918',
      block: '10.0.0.0/8',
    });
    expect(classifyAddress('64:ff9b::7f00:1')).toMatchObject({ rfc: 'RFC 6052', embedded: ['127.0.0.1'] });
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2').embedded).toEqual([
      '65.54.227.120',
      '192.0.2.45',
    ]);
  });

  it('refuses text that is not an address in standard form (alternative spellings go through parseHostLiteral)', () => {
    for (const bad of ['0x7f.1', '127.1', '2130706433', 'fe80::1%eth0', '[::1]', 'example.com', '']) {
      expect(() => classifyAddress(bad), bad).toThrow(TypeError);
    }
  });

  it('judges an IPv4 address and its IPv4-mapped and NAT64 forms alike (property)', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const cls = classifyAddress(v4);
        expect(classifyAddress(`::ffff:${v4}`).public).toBe(cls.public);
        expect(classifyAddress(`64:ff9b::${v4}`).public).toBe(cls.public);
        // IPv4-compatible and SIIT forms are never public, whatever they carry.
        expect(classifyAddress(`::ffff:0:${v4}`).public).toBe(false);
      }),
    );
  });
});

describe('parseHostLiteral', () => {
  it.each([
    // Alternative IPv4 spellings, parsed the way inet_aton and WHATWG URL parse them
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0X7F000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0177.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['0x7f.0x0.0x0.0x1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0x', '0.0.0.0'],
    ['0', '0.0.0.0'],
    ['4294967295', '255.255.255.255'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['１２７．０．０．１', '127.0.0.1'], // full-width digits and dots: IDNA maps them first
    ['8.8.8.8', '8.8.8.8'],
    // IPv6, with or without brackets, canonical RFC 5952 text (IPv4-mapped in hex, as WHATWG URL writes it)
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['::127.0.0.1', '::7f00:1'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['[2001:DB8:0:0:1:0:0:1]', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['[2606:4700:4700:0:0:0:0:1111]', '2606:4700:4700::1111'],
  ])('%s → %s', (host, expected) => {
    expect(parseHostLiteral(host)).toBe(expected);
  });

  it.each([
    'example.com',
    'EXAMPLE.com.',
    'localhost',
    'a1.example',
    '1.2.3.foo',
    '0x7f.example',
    'xn--bcher-kva.example',
  ])('%s is a name', (host) => {
    expect(parseHostLiteral(host)).toBeUndefined();
  });

  it.each([
    '1.2.3.256',
    '1.2.3.4.5',
    '256.1',
    '4294967296',
    '08.0.0.1', // 0-prefixed means octal, and 8 is no octal digit
    '1.2.3.09',
    '0x1g.1',
    'foo.1', // ends in a number but is no address: WHATWG URL refuses it too
    '1..2',
    '[fe80::1%eth0]',
    'fe80::1%25eth0',
    '[::1',
    '::1]',
    '[example.com]',
    '::ffff:1.2.3',
    '1::2::3',
  ])('%s is refused as an invalid host', (host) => {
    expect(() => parseHostLiteral(host)).toThrow(UnsafeTargetError);
    try {
      parseHostLiteral(host);
    } catch (err) {
      expect(err).toMatchObject({ statusCode: 400, code: 'bad_request', reason: 'invalid_host' });
    }
  });

  it('agrees with the WHATWG URL host parser on decimal spellings (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        expect(parseHostLiteral(String(n))).toBe(new URL(`http://${n}/`).hostname);
        expect(parseHostLiteral(`0x${n.toString(16)}`)).toBe(new URL(`http://0x${n.toString(16)}/`).hostname);
      }),
    );
  });

  it('agrees with WHATWG URL on IPv6 serialization (property)', () => {
    fc.assert(
      fc.property(fc.ipV6(), (v6) => {
        expect(`[${parseHostLiteral(v6)}]`).toBe(new URL(`http://[${v6}]/`).hostname);
      }),
    );
  });
});

describe('isAllowedByCidrs', () => {
  it.each([
    ['127.0.0.2', ['127.0.0.0/8'], true],
    ['127.0.0.2', ['127.0.0.5/8'], true], // host bits in the CIDR are ignored
    ['127.0.0.2', ['127.0.0.2'], true], // a bare address is a /32
    ['127.0.0.3', ['127.0.0.2'], false],
    ['127.0.0.2', ['127.0.0.2/32'], true],
    ['10.0.0.1', ['127.0.0.0/8'], false],
    ['::ffff:127.0.0.2', ['127.0.0.0/8'], true], // the same destination, mapped
    ['127.0.0.2', ['::ffff:127.0.0.0/104'], true],
    ['::ffff:7f00:2', ['::ffff:127.0.0.0/104'], true],
    ['::1', ['::1'], true],
    ['::1', ['::1/128'], true],
    ['::2', ['::1'], false],
    ['::1', ['127.0.0.1'], false],
    ['127.0.0.1', ['::1'], false],
    ['fd00::1', ['fc00::/7'], true],
    ['fe80::1', ['fc00::/7'], false],
    ['8.8.8.8', ['0.0.0.0/0'], true],
    ['2001:db8::1', ['0.0.0.0/0'], false],
    ['127.0.0.2', [], false],
  ] as const)('%s in %j → %s', (ip, cidrs, expected) => {
    expect(isAllowedByCidrs(ip, cidrs)).toBe(expected);
  });

  it('throws on a CIDR config validation would have refused', () => {
    expect(() => isAllowedByCidrs('127.0.0.1', ['127.0.0.0/33'])).toThrow(TypeError);
    expect(() => isAllowedByCidrs('127.0.0.1', ['nonsense'])).toThrow(TypeError);
  });
});
