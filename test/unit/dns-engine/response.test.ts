/**
 * What one authoritative response means (src/dns-engine/response.ts), on
 * messages encoded and decoded as they travel: scrubbing to the server's zone,
 * the CNAME chain inside one response, referrals and their glue, and the
 * answers that make a server lame.
 */
import * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/dns-engine/response.js';
import { decodeMessage } from '../../../src/providers/dns/wire.js';

type Rec = { name: string; type: string; ttl?: number; data: unknown };

function message(
  qname: string,
  qtype: string,
  m: { aa?: boolean; rcode?: number; answers?: Rec[]; authorities?: Rec[]; additionals?: Rec[] },
) {
  const withTtl = (rs: Rec[] = []) => rs.map((r) => ({ ttl: 300, class: 'IN', ...r }));
  const wire = packet.encode({
    type: 'response',
    id: 1,
    flags: (m.aa ? packet.AUTHORITATIVE_ANSWER : 0) | (m.rcode ?? 0),
    questions: [{ name: qname, type: qtype, class: 'IN' }],
    answers: withTtl(m.answers),
    authorities: withTtl(m.authorities),
    additionals: withTtl(m.additionals),
  } as unknown as packet.Packet);
  return decodeMessage(wire);
}

const soa = (zone: string): Rec => ({
  name: zone,
  type: 'SOA',
  data: {
    mname: `ns.${zone}`,
    rname: `h.${zone}`,
    serial: 1,
    refresh: 1,
    retry: 1,
    expire: 1,
    minimum: 60,
  },
});

describe('classify', () => {
  it('drops records outside the zone from every section (RFC 2181 §5.4.1)', () => {
    const v = classify(
      message('www.example.test', 'A', {
        aa: true,
        answers: [
          { name: 'www.example.test', type: 'A', data: '192.0.2.1' },
          { name: 'www.bank.test', type: 'A', data: '192.0.2.66' },
        ],
        authorities: [{ name: 'bank.test', type: 'NS', data: 'ns.evil.test' }],
        additionals: [{ name: 'ns.evil.test', type: 'A', data: '192.0.2.66' }],
      }),
      'example.test',
      'www.example.test',
      'A',
    );
    expect(v.kind).toBe('answer');
    if (v.kind !== 'answer') return;
    expect(v.records.map((r) => r.name)).toEqual(['www.example.test']);
    expect(v.sections.authority).toEqual([]);
    expect(v.sections.additional).toEqual([]);
  });

  it('follows a CNAME chain inside the zone, and stops where it leaves it', () => {
    const inZone = classify(
      message('a.example.test', 'A', {
        aa: true,
        answers: [
          { name: 'a.example.test', type: 'CNAME', data: 'b.example.test' },
          { name: 'b.example.test', type: 'A', data: '192.0.2.2' },
        ],
      }),
      'example.test',
      'a.example.test',
      'A',
    );
    expect(inZone.kind).toBe('answer');
    const out = classify(
      message('a.example.test', 'A', {
        aa: true,
        answers: [
          { name: 'a.example.test', type: 'CNAME', data: 'www.other.test' },
          // Not this zone's to say: dropped, so the resolver asks other.test itself.
          { name: 'www.other.test', type: 'A', data: '192.0.2.66' },
        ],
      }),
      'example.test',
      'a.example.test',
      'A',
    );
    expect(out).toMatchObject({ kind: 'cname', target: 'www.other.test' });
  });

  it('ends a CNAME loop inside one response at the repeated name', () => {
    const v = classify(
      message('a.example.test', 'A', {
        aa: true,
        answers: [
          { name: 'a.example.test', type: 'CNAME', data: 'b.example.test' },
          { name: 'b.example.test', type: 'CNAME', data: 'a.example.test' },
        ],
      }),
      'example.test',
      'a.example.test',
      'A',
    );
    expect(v).toMatchObject({ kind: 'cname', target: 'a.example.test' });
  });

  it('takes glue for the NS names only inside the referring zone', () => {
    const v = classify(
      message('www.sub.evil.test', 'A', {
        authorities: [
          { name: 'sub.evil.test', type: 'NS', ttl: 600, data: 'ns1.sub.evil.test' },
          { name: 'sub.evil.test', type: 'NS', ttl: 600, data: 'ns.bank.test' },
        ],
        additionals: [
          { name: 'ns1.sub.evil.test', type: 'A', ttl: 120, data: '192.0.2.10' },
          { name: 'ns.bank.test', type: 'A', data: '192.0.2.66' },
          { name: 'unrelated.evil.test', type: 'A', data: '192.0.2.67' },
        ],
      }),
      'evil.test',
      'www.sub.evil.test',
      'A',
    );
    expect(v.kind).toBe('referral');
    if (v.kind !== 'referral') return;
    expect(v.referral).toMatchObject({
      zone: 'sub.evil.test',
      nsNames: ['ns1.sub.evil.test', 'ns.bank.test'],
      ttl: 120,
      outOfBailiwick: [{ name: 'ns.bank.test', address: '192.0.2.66' }],
    });
    expect([...v.referral.glue]).toEqual([['ns1.sub.evil.test', ['192.0.2.10']]]);
  });

  it.each([
    ['REFUSED', message('www.example.test', 'A', { rcode: 5 })],
    ['SERVFAIL', message('www.example.test', 'A', { rcode: 2 })],
    [
      'an NXDOMAIN without AA',
      message('www.example.test', 'A', { rcode: 3, authorities: [soa('example.test')] }),
    ],
    ['a NODATA without AA', message('www.example.test', 'A', { authorities: [soa('example.test')] })],
    [
      'an upward referral',
      message('www.example.test', 'A', { authorities: [{ name: 'test', type: 'NS', data: 'ns.nic.test' }] }),
    ],
    ['an empty non-authoritative answer', message('www.example.test', 'A', {})],
  ])('calls %s lame', (_, m) => {
    expect(classify(m, 'example.test', 'www.example.test', 'A').kind).toBe('lame');
  });

  it('tells NXDOMAIN from NODATA, and takes DS from the parent as an answer', () => {
    const nx = message('nope.example.test', 'A', { aa: true, rcode: 3, authorities: [soa('example.test')] });
    expect(classify(nx, 'example.test', 'nope.example.test', 'A').kind).toBe('nxdomain');
    const nodata = message('www.example.test', 'MX', { aa: true, authorities: [soa('example.test')] });
    expect(classify(nodata, 'example.test', 'www.example.test', 'MX').kind).toBe('nodata');
    const ds = message('example.test', 'DS', {
      aa: true,
      answers: [
        {
          name: 'example.test',
          type: 'DS',
          data: { keyTag: 1, algorithm: 13, digestType: 2, digest: Buffer.alloc(32) },
        },
      ],
    });
    expect(classify(ds, 'test', 'example.test', 'DS').kind).toBe('answer');
  });
});
