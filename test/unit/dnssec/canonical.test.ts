/**
 * Canonical form and order (RFC 4034 §6, RFC 6840 §5.1), the signed data of an
 * RRSIG (RFC 4034 §3.1.8.1) and the wildcard rule of its Labels field
 * (RFC 4035 §5.3.4), against octets written out by hand.
 */
import * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import {
  canonicalOrder,
  canonicalRdata,
  canonicalRRsetWire,
  compareNames,
  rrsigLabelCount,
  signedData,
  wildcardExpansion,
} from '../../../src/dnssec/index.js';
import type { DnsRecord, RrsigData } from '../../../src/dnssec/types.js';
import { decodeRdata, nameWire } from '../../../src/dnssec/wire.js';
import { rr, t } from './support.js';

/** A name in wire form written by hand: each label's length, its octets, the root. */
function wireName(...labels: string[]): Buffer {
  return Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0]),
  ]);
}

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/** A record decoded by dns-packet from RDATA octets, as the engine will hand it over. */
function decoded(name: string, type: string, rdata: Buffer): DnsRecord {
  return rr(name, type, decodeRdata(type, rdata));
}

describe('canonical order of names (RFC 4034 §6.1)', () => {
  it('sorts the RFC’s example list into the RFC’s order', () => {
    // RFC 4034 §6.1, with \001 and \200 as the octets 1 and 200 (dns-packet hands labels over as text).
    const expected = [
      'example',
      'a.example',
      'yljkjljk.a.example',
      'Z.a.example',
      'zABC.a.EXAMPLE',
      'z.example',
      '\u0001.z.example',
      '*.z.example',
      '\u00c8.z.example',
    ];
    const shuffled = [...expected].reverse();
    shuffled.push(shuffled.shift()!);
    expect(shuffled.sort(compareNames)).toEqual(expected);
  });

  it('compares case-insensitively, the root first, a missing label before any', () => {
    expect(compareNames('EXAMPLE.com', 'example.COM.')).toBe(0);
    expect(compareNames('.', 'com')).toBeLessThan(0);
    expect(compareNames('example.com', 'a.example.com')).toBeLessThan(0);
    expect(compareNames('b.example.com', 'a.b.example.com')).toBeLessThan(0);
    expect(compareNames('z.example.com', 'a.b.example.com')).toBeGreaterThan(0);
  });
});

describe('canonical RDATA (RFC 4034 §6.2, RFC 6840 §5.1)', () => {
  it('lower-cases the names inside MX, NS, SOA, SRV, RRSIG', () => {
    const mx = Buffer.concat([u16(10), wireName('MAIL', 'Example', 'COM')]);
    expect(canonicalRdata(decoded('x', 'MX', mx))).toEqual(
      Buffer.concat([u16(10), wireName('mail', 'example', 'com')]),
    );
    expect(canonicalRdata(decoded('x', 'NS', wireName('NS1', 'Example')))).toEqual(
      wireName('ns1', 'example'),
    );
    const soaTail = Buffer.concat([u32(1), u32(2), u32(3), u32(4), u32(5)]);
    const soa = Buffer.concat([wireName('NS', 'EX'), wireName('Host', 'Ex'), soaTail]);
    expect(canonicalRdata(decoded('x', 'SOA', soa))).toEqual(
      Buffer.concat([wireName('ns', 'ex'), wireName('host', 'ex'), soaTail]),
    );
    const srv = Buffer.concat([u16(1), u16(2), u16(443), wireName('Target', 'EX')]);
    expect(canonicalRdata(decoded('x', 'SRV', srv))).toEqual(
      Buffer.concat([u16(1), u16(2), u16(443), wireName('target', 'ex')]),
    );
    const head = Buffer.concat([u16(1), Buffer.from([8, 2]), u32(3600), u32(2), u32(1), u16(7)]);
    const rrsig = Buffer.concat([head, wireName('Example', 'NET'), Buffer.from([0xaa, 0xbb])]);
    expect(canonicalRdata(decoded('x', 'RRSIG', rrsig))).toEqual(
      Buffer.concat([head, wireName('example', 'net'), Buffer.from([0xaa, 0xbb])]),
    );
  });

  it('keeps the case of NSEC’s next name (RFC 6840 §5.1) and of text', () => {
    const nsec = Buffer.concat([wireName('Next', 'EXAMPLE'), Buffer.from([0, 1, 0x40])]);
    expect(canonicalRdata(decoded('x', 'NSEC', nsec))).toEqual(nsec);
    const txt = Buffer.concat([Buffer.from([5]), Buffer.from('HeLLo')]);
    expect(canonicalRdata(decoded('x', 'TXT', txt))).toEqual(txt);
  });

  it('lower-cases the older types dns-packet leaves as octets (AFSDB, MINFO), unless compressed', () => {
    const afsdb = Buffer.concat([u16(1), wireName('AFS', 'Example')]);
    expect(canonicalRdata(rr('x', 'AFSDB', afsdb))).toEqual(
      Buffer.concat([u16(1), wireName('afs', 'example')]),
    );
    const minfo = Buffer.concat([wireName('A', 'B'), wireName('C', 'D')]);
    expect(canonicalRdata(rr('x', 'UNKNOWN_14', minfo))).toEqual(
      Buffer.concat([wireName('a', 'b'), wireName('c', 'd')]),
    );
    const compressed = Buffer.from([1, 0x41, 0xc0, 0x0c]);
    expect(canonicalRdata(rr('x', 'UNKNOWN_7', compressed))).toEqual(compressed);
  });

  it('gives back, byte for byte, the RDATA dns-packet decoded (one record per type)', () => {
    const records: DnsRecord[] = [
      rr('a.example', 'A', '192.0.2.1'),
      rr('a.example', 'AAAA', '2001:db8::1'),
      rr('a.example', 'NS', 'ns.example'),
      rr('a.example', 'CNAME', 'b.example'),
      rr('a.example', 'SOA', {
        mname: 'ns.example',
        rname: 'host.example',
        serial: 7,
        refresh: 8,
        retry: 9,
        expire: 10,
        minimum: 11,
      }),
      rr('a.example', 'MX', { preference: 5, exchange: 'mx.example' }),
      rr('a.example', 'TXT', [Buffer.from('v=spf1 -all'), Buffer.from('')]),
      rr('a.example', 'SRV', { priority: 1, weight: 2, port: 3, target: 'srv.example' }),
      rr('a.example', 'CAA', { flags: 0, tag: 'issue', value: 'ca.example' }),
      rr('a.example', 'DS', { keyTag: 1, algorithm: 13, digestType: 2, digest: Buffer.alloc(32, 7) }),
      rr('a.example', 'DNSKEY', { flags: 257, algorithm: 13, key: Buffer.alloc(64, 9) }),
      rr('a.example', 'NSEC', {
        nextDomain: 'b.example',
        rrtypes: ['A', 'RRSIG', 'NSEC', 'CAA', 'UNKNOWN_65534'],
      }),
      rr('a.example', 'NSEC3', {
        algorithm: 1,
        flags: 1,
        iterations: 0,
        salt: Buffer.alloc(0),
        nextDomain: Buffer.alloc(20, 3),
        rrtypes: ['A', 'RRSIG'],
      }),
      rr('a.example', 'TLSA', { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 1) }),
      rr('a.example', 'HINFO', { cpu: 'KLH-10', os: 'ITS' }),
      rr('a.example', 'NAPTR', {
        order: 1,
        preference: 2,
        flags: 'S',
        services: 'SIP+D2U',
        regexp: '',
        replacement: '_sip._udp.example',
      }),
      rr('a.example', 'UNKNOWN_65', Buffer.from([0, 1, 0])),
    ];
    for (const record of records) {
      const message = packet.encode({ type: 'response', answers: [record as packet.Answer] });
      const rdata = message.subarray(12 + nameWire(record.name).length + 10);
      const back = packet.decode(message).answers![0] as DnsRecord;
      expect(canonicalRdata(back), record.type).toEqual(rdata);
    }
  });

  it('keeps a CAA flags octet that dns-packet would rewrite', () => {
    const caa = Buffer.concat([Buffer.from([0x81, 5]), Buffer.from('issueca.example')]);
    expect(canonicalRdata(decoded('x', 'CAA', caa))).toEqual(caa);
  });
});

describe('canonical RRset (RFC 4034 §6.2, §6.3)', () => {
  it('writes each RR as owner | type | class | original TTL | RDLENGTH | RDATA, the owner lower-cased', () => {
    const wire = canonicalRRsetWire([rr('WWW.Example.NET', 'A', '192.0.2.1', 7)], 3600);
    expect(wire).toEqual(
      Buffer.concat([
        wireName('www', 'example', 'net'),
        u16(1),
        u16(1),
        u32(3600),
        u16(4),
        Buffer.from([192, 0, 2, 1]),
      ]),
    );
  });

  it('orders RRs by RDATA as unsigned octets, shorter first, and drops duplicates', () => {
    const set = [
      rr('x', 'A', '192.0.2.10'),
      rr('x', 'A', '192.0.2.9'),
      rr('x', 'A', '192.0.2.10'),
      rr('x', 'A', '10.0.0.1'),
    ];
    expect(canonicalOrder(set).map((e) => e.record.data)).toEqual(['10.0.0.1', '192.0.2.9', '192.0.2.10']);
    const txt = [rr('x', 'TXT', [Buffer.from('a'), Buffer.from('')]), rr('x', 'TXT', [Buffer.from('a')])];
    expect(canonicalOrder(txt).map((e) => e.rdata.toString('hex'))).toEqual(['0161', '016100']);
  });

  it('orders by the lower-cased RDATA: two spellings of one MX are one record', () => {
    const set = [
      rr('x', 'MX', { preference: 1, exchange: 'MX.example' }),
      rr('x', 'MX', { preference: 1, exchange: 'mx.EXAMPLE' }),
    ];
    expect(canonicalOrder(set)).toHaveLength(1);
  });
});

describe('signed data (RFC 4034 §3.1.8.1)', () => {
  const sig: RrsigData = {
    typeCovered: 'A',
    algorithm: 8,
    labels: 3,
    originalTTL: 3600,
    expiration: t('20300101000000'),
    inception: t('20000101000000'),
    keyTag: 9033,
    signersName: 'Example.NET',
    signature: Buffer.from('ignored'),
  };

  it('is the RRSIG RDATA without the signature, the signer lower-cased, then the RRset', () => {
    const head = Buffer.concat([
      u16(1),
      Buffer.from([8, 3]),
      u32(3600),
      u32(t('20300101000000')),
      u32(t('20000101000000')),
      u16(9033),
      wireName('example', 'net'),
    ]);
    const rrWire = Buffer.concat([wireName('www', 'example', 'net'), u16(1), u16(1), u32(3600), u16(4)]);
    expect(signedData(sig, [rr('www.example.net', 'A', '192.0.2.91', 60)])).toEqual(
      Buffer.concat([head, rrWire, Buffer.from([192, 0, 2, 91])]),
    );
  });

  it('signs a wildcard expansion over the wildcard owner (RFC 4035 §5.3.2)', () => {
    const expanded = signedData({ ...sig, labels: 2 }, [rr('a.z.w.example', 'A', '192.0.2.1')]);
    const literal = signedData({ ...sig, labels: 2 }, [rr('*.w.example', 'A', '192.0.2.1')]);
    expect(expanded).toEqual(literal);
    expect(expanded.includes(wireName('*', 'w', 'example'))).toBe(true);
  });
});

describe('the Labels field (RFC 4034 §3.1.3, RFC 4035 §5.3.4)', () => {
  it('counts labels without the root and a leading wildcard', () => {
    expect(rrsigLabelCount('www.example.net')).toBe(3);
    expect(rrsigLabelCount('*.w.example')).toBe(2);
    expect(rrsigLabelCount('.')).toBe(0);
  });

  it('tells an exact owner, an expansion (with its closest encloser and next closer) and an impossible one', () => {
    expect(wildcardExpansion('x.w.example', 3)).toEqual({ kind: 'exact' });
    expect(wildcardExpansion('*.w.example', 2)).toEqual({ kind: 'exact' });
    expect(wildcardExpansion('a.z.w.example', 2)).toEqual({
      kind: 'expanded',
      wildcard: '*.w.example',
      closestEncloser: 'w.example',
      nextCloser: 'z.w.example',
    });
    expect(wildcardExpansion('a.example', 0)).toMatchObject({
      kind: 'expanded',
      wildcard: '*',
      closestEncloser: '.',
    });
    expect(wildcardExpansion('a.example', 3)).toEqual({ kind: 'invalid' });
  });
});
