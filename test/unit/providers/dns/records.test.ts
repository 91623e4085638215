import * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { presentation } from '../../../../src/providers/dns/presentation.js';
import { base32hex, dnskeyData, parseSvcb } from '../../../../src/providers/dns/records.js';
import type { DnsRR } from '../../../../src/providers/dns/types.js';
import { decodeResponse } from '../../../../src/providers/dns/wire.js';
import { DNSKEY_PUBLIC, HTTPS_RDATA, LONG_TXT_STRINGS } from '../../../fakes/dns-zones.js';

/** Encodes records with dns-packet and decodes them with our client: one round trip per case. */
function roundTrip(records: { name: string; type: string; ttl?: number; data: unknown }[]): DnsRR[] {
  const wire = packet.encode({
    type: 'response',
    id: 1,
    flags: 0,
    questions: [{ name: 'example.test', type: 'A', class: 'IN' }],
    // Array data copied: dns-packet's TXT encoder writes Buffers into the array it is given.
    answers: records.map((r) => ({ ttl: 300, ...r, data: Array.isArray(r.data) ? [...r.data] : r.data })),
  } as packet.Packet);
  return decodeResponse(wire).answer.answers;
}

function one(type: string, data: unknown, name = 'Example.TEST'): DnsRR {
  const [rr] = roundTrip([{ name, type, data }]);
  if (!rr) throw new Error('no record decoded');
  return rr;
}

describe('record normalization and presentation', () => {
  it('A and AAAA', () => {
    const a = one('A', '192.0.2.1');
    expect(a).toEqual({ name: 'example.test', type: 'A', ttl: 300, data: { address: '192.0.2.1' } });
    expect(presentation(a)).toBe('192.0.2.1');
    const aaaa = one('AAAA', '2001:0db8:0000:0000:0000:0000:0000:0010');
    expect(aaaa.data).toEqual({ address: '2001:db8::10' });
    expect(presentation(aaaa)).toBe('2001:db8::10');
  });

  it('CNAME, NS, PTR and DNAME names are lower-cased, without a trailing dot', () => {
    expect(one('CNAME', 'Alias.Example.Test.').data).toEqual({ target: 'alias.example.test' });
    expect(one('NS', 'NS1.example.test').data).toEqual({ host: 'ns1.example.test' });
    const ptr = one('PTR', 'host.example.test', '10.2.0.192.in-addr.arpa');
    expect(ptr).toMatchObject({
      name: '10.2.0.192.in-addr.arpa',
      type: 'PTR',
      data: { host: 'host.example.test' },
    });
    expect(presentation(ptr)).toBe('host.example.test');
    expect(one('DNAME', 'other.test').data).toEqual({ target: 'other.test' });
  });

  it('MX, including the null MX of RFC 7505', () => {
    const mx = one('MX', { preference: 10, exchange: 'Mail.example.test' });
    expect(mx.data).toEqual({ priority: 10, exchange: 'mail.example.test' });
    expect(presentation(mx)).toBe('10 mail.example.test');
    const nullMx = one('MX', { preference: 0, exchange: '.' });
    expect(nullMx.data).toEqual({ priority: 0, exchange: '.' });
    expect(presentation(nullMx)).toBe('0 .');
  });

  it('TXT longer than 255 bytes keeps its character-strings and joins them without separators', () => {
    const txt = one('TXT', LONG_TXT_STRINGS);
    if (txt.type !== 'TXT') throw new Error('expected TXT');
    expect(LONG_TXT_STRINGS.length).toBeGreaterThan(1);
    expect(txt.data.strings).toEqual(LONG_TXT_STRINGS);
    expect(txt.data.text).toBe(LONG_TXT_STRINGS.join(''));
    expect(txt.data.text.length).toBeGreaterThan(255);
    expect(presentation(txt)).toBe(LONG_TXT_STRINGS.map((s) => `"${s}"`).join(' '));
  });

  it('TXT presentation escapes quotes, backslashes and non-printable bytes like dig', () => {
    const txt = one('TXT', ['say "hi"', 'back\\slash', 'tab\there', 'caf\u00e9']);
    expect(presentation(txt)).toBe('"say \\"hi\\"" "back\\\\slash" "tab\\009here" "caf\\195\\169"');
    expect(txt.data).toMatchObject({ text: 'say "hi"back\\slashtab\therecafé' });
  });

  it('SOA', () => {
    const soa = one('SOA', {
      mname: 'NS1.example.test',
      rname: 'hostmaster.example.test',
      serial: 2024060101,
      refresh: 7200,
      retry: 3600,
      expire: 1209600,
      minimum: 60,
    });
    expect(soa.data).toEqual({
      mname: 'ns1.example.test',
      rname: 'hostmaster.example.test',
      serial: 2024060101,
      refresh: 7200,
      retry: 3600,
      expire: 1209600,
      minimum: 60,
    });
    expect(presentation(soa)).toBe(
      'ns1.example.test hostmaster.example.test 2024060101 7200 3600 1209600 60',
    );
  });

  it('CAA with and without the issuer-critical flag', () => {
    const plain = one('CAA', { flags: 0, tag: 'issue', value: 'letsencrypt.org' });
    expect(plain.data).toEqual({ flags: 0, tag: 'issue', value: 'letsencrypt.org', critical: false });
    expect(presentation(plain)).toBe('0 issue "letsencrypt.org"');
    const critical = one('CAA', { flags: 128, tag: 'tbs', value: 'unknown' });
    expect(critical.data).toEqual({ flags: 128, tag: 'tbs', value: 'unknown', critical: true });
    expect(presentation(critical)).toBe('128 tbs "unknown"');
  });

  it('SRV', () => {
    const srv = one(
      'SRV',
      { priority: 10, weight: 60, port: 5060, target: 'SIP.example.test' },
      '_sip._tcp.example.test',
    );
    expect(srv).toMatchObject({
      name: '_sip._tcp.example.test',
      data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' },
    });
    expect(presentation(srv)).toBe('10 60 5060 sip.example.test');
  });

  it('DS and DNSKEY, with the key tag computed (RFC 4034 Appendix B)', () => {
    const ds = one('DS', {
      keyTag: 2371,
      algorithm: 13,
      digestType: 2,
      digest: Buffer.from('abcdef', 'hex'),
    });
    expect(ds.data).toEqual({ keyTag: 2371, algorithm: 13, digestType: 2, digest: 'ABCDEF' });
    expect(presentation(ds)).toBe('2371 13 2 ABCDEF');
    const key = one('DNSKEY', { flags: 257, algorithm: 13, key: DNSKEY_PUBLIC });
    expect(key.data).toMatchObject({
      flags: 257,
      protocol: 3,
      algorithm: 13,
      publicKey: DNSKEY_PUBLIC.toString('base64'),
    });
    expect(presentation(key)).toBe(`257 3 13 ${DNSKEY_PUBLIC.toString('base64')}`);
  });

  it('computes the key tags of the IANA root KSKs (20326, 38696)', () => {
    // The root trust anchors as published by IANA (https://data.iana.org/root-anchors/) and shipped in dns-root-data.
    const ksk2017 =
      'AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU=';
    const ksk2024 =
      'AwEAAa96jeuknZlaeSrvyAJj6ZHv28hhOKkx3rLGXVaC6rXTsDc449/cidltpkyGwCJNnOAlFNKF2jBosZBU5eeHspaQWOmOElZsjICMQMC3aeHbGiShvZsx4wMYSjH8e7Vrhbu6irwCzVBApESjbUdpWWmEnhathWu1jo+siFUiRAAxm9qyJNg/wOZqqzL/dL/q8PkcRU5oUKEpUge71M3ej2/7CPqpdVwuMoTvoB+ZOT4YeGyxMvHmbrxlFzGOHOijtzN+u1TQNatX2XBuzZNQ1K+s2CXkPIZo7s6JgZyvaBevYtxPvYLw4z9mR7K2vaF18UYH9Z9GNUUeayffKC73PYc=';
    expect(dnskeyData(257, 8, Buffer.from(ksk2017, 'base64')).keyTag).toBe(20326);
    expect(dnskeyData(257, 8, Buffer.from(ksk2024, 'base64')).keyTag).toBe(38696);
  });

  it('RRSIG, NSEC and NSEC3', () => {
    const sig = one('RRSIG', {
      typeCovered: 'A',
      algorithm: 13,
      labels: 2,
      originalTTL: 300,
      expiration: 1735689600, // 2025-01-01T00:00:00Z
      inception: 1733011200, // 2024-12-01T00:00:00Z
      keyTag: 2371,
      signersName: 'Example.test',
      signature: Buffer.from([1, 2, 3]),
    });
    expect(sig.data).toEqual({
      typeCovered: 'A',
      algorithm: 13,
      labels: 2,
      originalTtl: 300,
      expiration: 1735689600,
      inception: 1733011200,
      keyTag: 2371,
      signerName: 'example.test',
      signature: 'AQID',
    });
    expect(presentation(sig)).toBe('A 13 2 300 20250101000000 20241201000000 2371 example.test AQID');

    const nsec = one('NSEC', { nextDomain: 'b.example.test', rrtypes: ['A', 'RRSIG', 'NSEC'] });
    expect(presentation(nsec)).toBe('b.example.test A RRSIG NSEC');

    const nsec3 = one('NSEC3', {
      algorithm: 1,
      flags: 0,
      iterations: 0,
      salt: Buffer.alloc(0),
      nextDomain: Buffer.from('foobar'),
      rrtypes: ['A', 'RRSIG'],
    });
    expect(nsec3.data).toEqual({
      algorithm: 1,
      flags: 0,
      iterations: 0,
      salt: '',
      nextHashedOwner: 'CPNMUOJ1E8',
      types: ['A', 'RRSIG'],
    });
    expect(presentation(nsec3)).toBe('1 0 0 - CPNMUOJ1E8 A RRSIG');
  });

  it('TLSA', () => {
    const tlsa = one(
      'TLSA',
      { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.from('0a0b', 'hex') },
      '_25._tcp.mail.example.test',
    );
    expect(tlsa.data).toEqual({ usage: 3, selector: 1, matchingType: 1, data: '0A0B' });
    expect(presentation(tlsa)).toBe('3 1 1 0A0B');
  });

  it('HTTPS (RFC 9460), which dns-packet hands over as raw bytes', () => {
    const https = one('UNKNOWN_65', HTTPS_RDATA);
    expect(https).toMatchObject({
      type: 'HTTPS',
      data: {
        priority: 1,
        target: '.',
        params: [
          { key: 'alpn', value: 'h2,h3' },
          { key: 'ipv4hint', value: '192.0.2.10' },
          { key: 'ipv6hint', value: '2001:db8::10' },
        ],
      },
    });
    expect(presentation(https)).toBe('1 . alpn=h2,h3 ipv4hint=192.0.2.10 ipv6hint=2001:db8::10');
  });

  it('SVCB alias mode and unknown keys', () => {
    const rdata = Buffer.concat([
      Buffer.from([0, 0]),
      Buffer.from([3, ...Buffer.from('svc'), 4, ...Buffer.from('test'), 0]),
      Buffer.from([0, 2, 0, 0]), // no-default-alpn
      Buffer.from([0, 3, 0, 2, 0x01, 0xbb]), // port=443
      Buffer.from([0x03, 0xe7, 0, 1, 0xff]), // key999
    ]);
    expect(parseSvcb(rdata)).toEqual({
      priority: 0,
      target: 'svc.test',
      params: [
        { key: 'no-default-alpn', value: '' },
        { key: 'port', value: '443' },
        { key: 'key999', value: 'FF' },
      ],
    });
    expect(() => parseSvcb(Buffer.from([0, 1, 0, 0, 1, 0, 9]))).toThrow(/truncated/);
  });

  it('types it does not model keep their rdata in RFC 3597 generic form', () => {
    const hinfo = one('HINFO', { cpu: 'x86', os: 'linux' });
    expect(hinfo).toMatchObject({ type: 'TYPE13', data: { rdata: '03783836056C696E7578' } });
    expect(presentation(hinfo)).toBe('\\# 10 03783836056C696E7578');
    const unknown = one('UNKNOWN_65280', Buffer.alloc(0));
    expect(unknown).toMatchObject({ type: 'TYPE65280', data: { rdata: '' } });
    expect(presentation(unknown)).toBe('\\# 0');
  });

  it('base32hex follows the RFC 4648 §10 test vectors (without padding)', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'CO'],
      ['fo', 'CPNG'],
      ['foo', 'CPNMU'],
      ['foob', 'CPNMUOG'],
      ['fooba', 'CPNMUOJ1'],
      ['foobar', 'CPNMUOJ1E8'],
    ];
    for (const [input, output] of vectors) expect(base32hex(Buffer.from(input))).toBe(output);
  });

  it('answers are plain JSON, so a cache round trip changes nothing', () => {
    const rrs = roundTrip([
      { name: 'example.test', type: 'TXT', data: LONG_TXT_STRINGS },
      { name: 'example.test', type: 'DNSKEY', data: { flags: 257, algorithm: 13, key: DNSKEY_PUBLIC } },
      { name: 'example.test', type: 'UNKNOWN_65', data: HTTPS_RDATA },
    ]);
    expect(JSON.parse(JSON.stringify(rrs))).toEqual(rrs);
  });
});
