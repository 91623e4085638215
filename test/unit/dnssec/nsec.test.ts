/**
 * NSEC proofs on the example zone of RFC 4035 Appendix A, against the responses
 * of its Appendix B, and the ways a denial can be misused (RFC 6840 §4).
 */
import { describe, expect, it } from 'vitest';
import {
  nsecClosestEncloser,
  nsecCovers,
  proveNsecNodata,
  proveNsecNxdomain,
  proveNsecWildcardAnswer,
  wildcardExpansion,
} from '../../../src/dnssec/index.js';
import type { NsecRecord } from '../../../src/dnssec/types.js';
import { nsec } from './support.js';

// RFC 4035 Appendix A: the NSEC chain of example.
const CHAIN = [
  nsec('example', 'a.example', ['NS', 'SOA', 'MX', 'RRSIG', 'NSEC', 'DNSKEY']),
  nsec('a.example', 'ai.example', ['NS', 'DS', 'RRSIG', 'NSEC']),
  nsec('ai.example', 'b.example', ['A', 'HINFO', 'AAAA', 'RRSIG', 'NSEC']),
  nsec('b.example', 'ns1.example', ['NS', 'RRSIG', 'NSEC']),
  nsec('ns1.example', 'ns2.example', ['A', 'RRSIG', 'NSEC']),
  nsec('ns2.example', '*.w.example', ['A', 'RRSIG', 'NSEC']),
  nsec('*.w.example', 'x.w.example', ['MX', 'RRSIG', 'NSEC']),
  nsec('x.w.example', 'x.y.w.example', ['MX', 'RRSIG', 'NSEC']),
  nsec('x.y.w.example', 'xx.example', ['MX', 'RRSIG', 'NSEC']),
  nsec('xx.example', 'example', ['A', 'HINFO', 'AAAA', 'RRSIG', 'NSEC']),
];

const at = (owner: string): NsecRecord => CHAIN.find((n) => n.name === owner)!;
const owners = (records: NsecRecord[]) => records.map((r) => r.name);

describe('which names an NSEC covers (RFC 4034 §4.1.1, §6.1)', () => {
  it('covers names strictly between owner and next, the last one up to the apex', () => {
    expect(nsecCovers(at('b.example'), 'ml.example')).toBe(true);
    expect(nsecCovers(at('b.example'), 'b.example')).toBe(false);
    expect(nsecCovers(at('b.example'), 'ns1.example')).toBe(false);
    expect(nsecCovers(at('xx.example'), 'z.example')).toBe(true);
    expect(nsecCovers(at('xx.example'), 'example')).toBe(false);
    expect(nsecCovers(at('xx.example'), 'other')).toBe(false);
    expect(nsecCovers(at('x.y.w.example'), 'a.z.w.example')).toBe(true);
  });

  it('implies the closest encloser from the names it shares with the owner and the next name', () => {
    expect(nsecClosestEncloser('a.z.w.example', at('x.y.w.example'))).toBe('w.example');
    expect(nsecClosestEncloser('ml.example', at('b.example'))).toBe('example');
  });
});

describe('RFC 4035 Appendix B responses', () => {
  it('B.2 name error: ml.example is proven absent with the NSECs at b.example and example', () => {
    const result = proveNsecNxdomain('ml.example', [at('b.example'), at('example')]);
    expect(result).toMatchObject({ status: 'proven', kind: 'nxdomain', closestEncloser: 'example' });
    expect(owners(result.records)).toEqual(['b.example', 'example']);
  });

  it('B.3 no data: ns1.example has no MX', () => {
    expect(proveNsecNodata('ns1.example', 'MX', [at('ns1.example')])).toMatchObject({
      status: 'proven',
      kind: 'nodata',
    });
  });

  it('B.5 referral to an unsigned zone: b.example has NS and no DS', () => {
    expect(proveNsecNodata('b.example', 'DS', [at('b.example')])).toMatchObject({
      status: 'proven',
      kind: 'insecure_delegation',
    });
  });

  it('B.6 wildcard expansion: a.z.w.example from *.w.example, with the NSEC at x.y.w.example', () => {
    const expansion = wildcardExpansion('a.z.w.example', 2);
    if (expansion.kind !== 'expanded') throw new Error('expected an expansion');
    const result = proveNsecWildcardAnswer('a.z.w.example', expansion.closestEncloser, [at('x.y.w.example')]);
    expect(result).toMatchObject({ status: 'proven', kind: 'wildcard_answer', closestEncloser: 'w.example' });
  });

  it('B.7 wildcard no data: a.z.w.example has no AAAA at *.w.example', () => {
    const result = proveNsecNodata('a.z.w.example', 'AAAA', [at('x.y.w.example'), at('*.w.example')]);
    expect(result).toMatchObject({ status: 'proven', kind: 'wildcard_nodata', closestEncloser: 'w.example' });
    expect(owners(result.records)).toEqual(['x.y.w.example', '*.w.example']);
  });

  it('B.8 DS child zone no data: the apex NSEC of example cannot deny its DS', () => {
    expect(proveNsecNodata('example', 'DS', [at('example')])).toMatchObject({
      status: 'failed',
      code: 'child_side_record',
    });
  });
});

describe('denials that do not prove', () => {
  it('NXDOMAIN without the wildcard denied, or with the wildcard present', () => {
    expect(proveNsecNxdomain('ml.example', [at('b.example')])).toMatchObject({
      status: 'failed',
      code: 'wildcard_not_denied',
    });
    expect(proveNsecNxdomain('a.z.w.example', [at('x.y.w.example'), at('*.w.example')])).toMatchObject({
      status: 'failed',
      code: 'wildcard_exists',
    });
  });

  it('NXDOMAIN for a name that exists, or is an empty non-terminal', () => {
    expect(proveNsecNxdomain('ns1.example', CHAIN)).toMatchObject({ status: 'failed', code: 'qname_exists' });
    expect(proveNsecNxdomain('y.w.example', CHAIN)).toMatchObject({ status: 'failed', code: 'qname_exists' });
    expect(proveNsecNodata('y.w.example', 'A', [at('x.w.example')])).toMatchObject({
      status: 'proven',
      kind: 'nodata',
    });
  });

  it('NXDOMAIN below a delegation, from the parent side of the cut (RFC 6840 §4.1)', () => {
    expect(proveNsecNxdomain('mc.b.example', [at('b.example'), at('example')])).toMatchObject({
      status: 'failed',
      code: 'delegation_misused',
    });
  });

  it('NODATA for a type the bitmap lists, for a CNAME owner, and at a delegation for anything but DS', () => {
    expect(proveNsecNodata('ns1.example', 'A', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'type_exists',
    });
    const cname = nsec('alias.example', 'b.example', ['CNAME', 'RRSIG', 'NSEC']);
    expect(proveNsecNodata('alias.example', 'A', [cname])).toMatchObject({
      status: 'failed',
      code: 'cname_exists',
    });
    expect(proveNsecNodata('b.example', 'A', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'delegation_misused',
    });
    expect(proveNsecNodata('a.example', 'DS', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'type_exists',
    });
  });

  it('NODATA for DS where there is no zone cut', () => {
    expect(proveNsecNodata('ns1.example', 'DS', CHAIN)).toMatchObject({ status: 'proven', kind: 'no_ds' });
  });

  it('a wildcard answer when the NSEC implies another closest encloser, or the name exists', () => {
    // An NSEC at z.w.example says z.w.example exists: *.w.example cannot answer for a.z.w.example.
    const deeper = nsec('z.w.example', 'xx.example', ['A', 'RRSIG', 'NSEC']);
    expect(proveNsecWildcardAnswer('a.z.w.example', 'w.example', [deeper])).toMatchObject({
      status: 'failed',
      code: 'wildcard_mismatch',
    });
    expect(proveNsecWildcardAnswer('x.w.example', 'w.example', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'qname_exists',
    });
  });

  it('nothing to go on', () => {
    expect(proveNsecNxdomain('ml.example', [])).toMatchObject({
      status: 'failed',
      code: 'no_denial_records',
    });
    expect(proveNsecNodata('ml.example', 'A', [at('ns1.example')])).toMatchObject({
      status: 'failed',
      code: 'not_covered',
    });
  });
});
