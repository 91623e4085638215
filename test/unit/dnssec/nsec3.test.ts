/**
 * NSEC3 (RFC 5155): the hashes of Appendix A, the proofs of Appendix B on the
 * example zone's chain, chains made at test time for what the appendix does not
 * show, and RFC 9276's iteration policy.
 */
import { describe, expect, it } from 'vitest';
import {
  base32hexDecode,
  base32hexEncode,
  NSEC3_MAX_ITERATIONS,
  nsec3ClosestEncloser,
  nsec3Covers,
  nsec3Hash,
  nsec3Matches,
  nsec3ParameterFindings,
  proveNsec3Nodata,
  proveNsec3Nxdomain,
  proveNsec3WildcardAnswer,
} from '../../../src/dnssec/index.js';
import type { Nsec3Record } from '../../../src/dnssec/types.js';
import { nsec3 } from './support.js';

const SALT = Buffer.from('aabbccdd', 'hex');

// RFC 5155 Appendix A: the hashed owner names (salt aabbccdd, 12 iterations), and the two
// the comments of Appendix B.1 add.
const HASHES: [string, string][] = [
  ['example', '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom'],
  ['a.example', '35mthgpgcu1qg68fab165klnsnk3dpvl'],
  ['ai.example', 'gjeqe526plbf1g8mklp59enfd789njgi'],
  ['ns1.example', '2t7b4g4vsa5smi47k61mv5bv1a22bojr'],
  ['ns2.example', 'q04jkcevqvmu85r014c7dkba38o0ji5r'],
  ['w.example', 'k8udemvp1j2f7eg6jebps17vp3n8i58h'],
  ['*.w.example', 'r53bq7cc2uvmubfu5ocmm6pers9tk9en'],
  ['x.w.example', 'b4um86eghhds6nea196smvmlo4ors995'],
  ['y.w.example', 'ji6neoaepv8b5o6k4ev33abha8ht9fgc'],
  ['x.y.w.example', '2vptu5timamqttgl4luu9kg21e0aor3s'],
  ['xx.example', 't644ebqk9bibcna874givr6joj62mlhv'],
  ['2t7b4g4vsa5smi47k61mv5bv1a22bojr.example', 'kohar7mbb8dc2ce8a9qvl8hon4k53uhi'],
  ['c.x.w.example', '0va5bpr2ou0vk0lbqeeljri88laipsfh'],
  ['*.x.w.example', '92pqneegtaue7pjatc3l3qnk738c6v5m'],
];

// RFC 5155 Appendix A: the zone's NSEC3 chain (owner hash, next hash, types); every record has opt-out set.
const APPENDIX_A: [string, string, string[]][] = [
  [
    '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom',
    '2t7b4g4vsa5smi47k61mv5bv1a22bojr',
    ['MX', 'DNSKEY', 'NS', 'SOA', 'NSEC3PARAM', 'RRSIG'],
  ],
  ['2t7b4g4vsa5smi47k61mv5bv1a22bojr', '2vptu5timamqttgl4luu9kg21e0aor3s', ['A', 'RRSIG']],
  ['2vptu5timamqttgl4luu9kg21e0aor3s', '35mthgpgcu1qg68fab165klnsnk3dpvl', ['MX', 'RRSIG']],
  ['35mthgpgcu1qg68fab165klnsnk3dpvl', 'b4um86eghhds6nea196smvmlo4ors995', ['NS', 'DS', 'RRSIG']],
  ['b4um86eghhds6nea196smvmlo4ors995', 'gjeqe526plbf1g8mklp59enfd789njgi', ['MX', 'RRSIG']],
  ['gjeqe526plbf1g8mklp59enfd789njgi', 'ji6neoaepv8b5o6k4ev33abha8ht9fgc', ['A', 'HINFO', 'AAAA', 'RRSIG']],
  ['ji6neoaepv8b5o6k4ev33abha8ht9fgc', 'k8udemvp1j2f7eg6jebps17vp3n8i58h', []],
  ['k8udemvp1j2f7eg6jebps17vp3n8i58h', 'kohar7mbb8dc2ce8a9qvl8hon4k53uhi', []],
  ['kohar7mbb8dc2ce8a9qvl8hon4k53uhi', 'q04jkcevqvmu85r014c7dkba38o0ji5r', ['A', 'RRSIG']],
  ['q04jkcevqvmu85r014c7dkba38o0ji5r', 'r53bq7cc2uvmubfu5ocmm6pers9tk9en', ['A', 'RRSIG']],
  ['r53bq7cc2uvmubfu5ocmm6pers9tk9en', 't644ebqk9bibcna874givr6joj62mlhv', ['MX', 'RRSIG']],
  ['t644ebqk9bibcna874givr6joj62mlhv', '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom', ['A', 'HINFO', 'AAAA', 'RRSIG']],
];

function appendixChain(flags = 1): Nsec3Record[] {
  return APPENDIX_A.map(([owner, next, types]) =>
    nsec3(`${owner}.example`, base32hexDecode(next)!, types, { flags, iterations: 12, salt: SALT }),
  );
}

const CHAIN = appendixChain();
const byHash = (chain: Nsec3Record[], hash: string) => chain.find((r) => r.name.startsWith(`${hash}.`))!;
const hashesOf = (records: Nsec3Record[]) => records.map((r) => r.name.split('.')[0]);

/** The first of n0.example, n1.example, ... whose Appendix A hash satisfies `test`. */
function firstName(test: (hash: string) => boolean): string {
  for (let i = 0; ; i++) if (test(nsec3Hash(`n${i}.example`, SALT, 12))) return `n${i}.example`;
}

/** A chain made now for the names of a zone, with the parameters given. */
function chainFor(
  zone: string,
  names: [string, string[]][],
  params: { flags?: number; iterations?: number; salt?: Buffer } = {},
): Nsec3Record[] {
  const hashed = names
    .map(([name, types]) => ({
      hash: nsec3Hash(name, params.salt ?? Buffer.alloc(0), params.iterations ?? 0),
      types,
    }))
    .sort((a, b) => Buffer.compare(base32hexDecode(a.hash)!, base32hexDecode(b.hash)!));
  return hashed.map(({ hash, types }, i) =>
    nsec3(`${hash}.${zone}`, base32hexDecode(hashed[(i + 1) % hashed.length]!.hash)!, types, params),
  );
}

describe('NSEC3 hashes (RFC 5155 §5, Appendix A)', () => {
  it.each(HASHES)('H(%s) = %s', (name, hash) => {
    expect(nsec3Hash(name, SALT, 12)).toBe(hash);
    expect(nsec3Hash(name.toUpperCase(), 'AABBCCDD', 12)).toBe(hash);
  });

  it('depends on the salt and the iterations', () => {
    expect(nsec3Hash('example', '-', 12)).not.toBe(HASHES[0]![1]);
    expect(nsec3Hash('example', SALT, 11)).not.toBe(HASHES[0]![1]);
  });

  it('spells hashes in base32hex without padding (RFC 4648 §10 test vectors)', () => {
    const vectors = ['', 'co', 'cpng', 'cpnmu', 'cpnmuog', 'cpnmuoj1', 'cpnmuoj1e8'];
    vectors.forEach((encoded, i) => {
      const bytes = Buffer.from('foobar'.slice(0, i));
      expect(base32hexEncode(bytes)).toBe(encoded);
      expect(base32hexDecode(encoded.toUpperCase())).toEqual(bytes);
    });
    expect(base32hexDecode('cpnmv')).toBeUndefined(); // non-zero padding bits
    expect(base32hexDecode('w0')).toBeUndefined(); // outside the alphabet
  });
});

describe('covers and matches (RFC 5155 §8.3)', () => {
  it('matches a name’s own record and covers the hashes between, the last record wrapping around', () => {
    expect(nsec3Matches(byHash(CHAIN, '2t7b4g4vsa5smi47k61mv5bv1a22bojr'), 'ns1.example')).toBe(true);
    expect(nsec3Covers(byHash(CHAIN, '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom'), 'c.x.w.example')).toBe(true);
    expect(nsec3Covers(byHash(CHAIN, '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom'), 'example')).toBe(false);
    // H(*.x.w.example) = 92pq... lies between 35mt... and b4um...
    expect(nsec3Covers(byHash(CHAIN, '35mthgpgcu1qg68fab165klnsnk3dpvl'), '*.x.w.example')).toBe(true);
    // The last record (t644… → 0p9m…) wraps: it covers the hashes after its owner and before its next.
    const last = byHash(CHAIN, 't644ebqk9bibcna874givr6joj62mlhv');
    const after = firstName((h) => h > 't644ebqk9bibcna874givr6joj62mlhv');
    const before = firstName((h) => h < '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom');
    for (const name of [after, before]) {
      expect(CHAIN.filter((r) => nsec3Covers(r, name))).toEqual([last]);
    }
  });

  it('skips records it must ignore: unknown hash algorithm, unknown flags (RFC 5155 §8.1, §8.2)', () => {
    const record = byHash(CHAIN, '2t7b4g4vsa5smi47k61mv5bv1a22bojr');
    expect(nsec3Matches({ ...record, data: { ...record.data, algorithm: 2 } }, 'ns1.example')).toBe(false);
    expect(nsec3Matches({ ...record, data: { ...record.data, flags: 2 } }, 'ns1.example')).toBe(false);
  });
});

describe('RFC 5155 Appendix B responses', () => {
  it('B.1 name error: a.c.x.w.example, proven with opt-out off; insecure as the appendix publishes it (opt-out)', () => {
    const strict = proveNsec3Nxdomain('a.c.x.w.example', appendixChain(0));
    expect(strict).toMatchObject({ status: 'proven', kind: 'nxdomain', closestEncloser: 'x.w.example' });
    expect(hashesOf(strict.records)).toEqual([
      'b4um86eghhds6nea196smvmlo4ors995', // matches the closest encloser x.w.example
      '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom', // covers the next closer name c.x.w.example
      '35mthgpgcu1qg68fab165klnsnk3dpvl', // covers the wildcard *.x.w.example
    ]);
    expect(proveNsec3Nxdomain('a.c.x.w.example', CHAIN)).toMatchObject({
      status: 'insecure',
      code: 'opt_out',
      kind: 'nxdomain',
    });
  });

  it('B.2 no data: ns1.example has no MX', () => {
    const result = proveNsec3Nodata('ns1.example', 'MX', CHAIN);
    expect(result).toMatchObject({ status: 'proven', kind: 'nodata' });
    expect(hashesOf(result.records)).toEqual(['2t7b4g4vsa5smi47k61mv5bv1a22bojr']);
  });

  it('B.2.1 no data at an empty non-terminal: y.w.example', () => {
    const result = proveNsec3Nodata('y.w.example', 'A', CHAIN);
    expect(result).toMatchObject({ status: 'proven', kind: 'nodata' });
    expect(hashesOf(result.records)).toEqual(['ji6neoaepv8b5o6k4ev33abha8ht9fgc']);
  });

  it('B.3 referral to an opt-out unsigned zone: no DS at c.example', () => {
    const result = proveNsec3Nodata('c.example', 'DS', CHAIN);
    expect(result).toMatchObject({
      status: 'proven',
      kind: 'insecure_delegation',
      closestEncloser: 'example',
    });
    expect(hashesOf(result.records)).toEqual([
      '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom',
      '35mthgpgcu1qg68fab165klnsnk3dpvl',
    ]);
    expect(nsec3ClosestEncloser('mc.c.example', CHAIN)).toMatchObject({
      closestEncloser: 'example',
      nextCloser: 'c.example',
    });
  });

  it('B.4 wildcard expansion: a.z.w.example from *.w.example; insecure under opt-out, proven without', () => {
    expect(proveNsec3WildcardAnswer('a.z.w.example', 'w.example', CHAIN)).toMatchObject({
      status: 'insecure',
      code: 'opt_out',
      kind: 'wildcard_answer',
    });
    const strict = proveNsec3WildcardAnswer('a.z.w.example', 'w.example', appendixChain(0));
    expect(strict).toMatchObject({ status: 'proven', kind: 'wildcard_answer' });
    expect(hashesOf(strict.records)).toEqual(['q04jkcevqvmu85r014c7dkba38o0ji5r']);
  });

  it('B.5 wildcard no data: a.z.w.example AAAA', () => {
    const result = proveNsec3Nodata('a.z.w.example', 'AAAA', CHAIN);
    expect(result).toMatchObject({ status: 'proven', kind: 'wildcard_nodata', closestEncloser: 'w.example' });
    expect(hashesOf(result.records)).toEqual([
      'k8udemvp1j2f7eg6jebps17vp3n8i58h',
      'q04jkcevqvmu85r014c7dkba38o0ji5r',
      'r53bq7cc2uvmubfu5ocmm6pers9tk9en',
    ]);
    expect(proveNsec3Nodata('a.z.w.example', 'MX', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'type_exists',
    });
  });

  it('B.6 DS child zone no data: the apex NSEC3 of example cannot deny its DS', () => {
    expect(proveNsec3Nodata('example', 'DS', CHAIN)).toMatchObject({
      status: 'failed',
      code: 'child_side_record',
    });
  });
});

describe('NSEC3 denials that do not prove', () => {
  const zone = chainFor('test', [
    ['test', ['SOA', 'NS', 'DNSKEY', 'NSEC3PARAM', 'RRSIG']],
    ['www.test', ['A', 'RRSIG']],
    ['*.wild.test', ['TXT', 'RRSIG']],
    ['wild.test', []],
    ['signed.test', ['NS', 'DS', 'RRSIG']],
    ['unsigned.test', ['NS']],
    ['dn.test', ['DNAME', 'RRSIG']],
  ]);

  it('NXDOMAIN for a name that exists, with a wildcard that exists, or without the wildcard covered', () => {
    expect(proveNsec3Nxdomain('www.test', zone)).toMatchObject({ status: 'failed', code: 'qname_exists' });
    expect(proveNsec3Nxdomain('a.wild.test', zone)).toMatchObject({
      status: 'failed',
      code: 'wildcard_exists',
    });
    expect(proveNsec3Nxdomain('nope.test', zone)).toMatchObject({ status: 'proven', kind: 'nxdomain' });
    const wildcardCover = zone.find((r) => nsec3Covers(r, '*.test'))!;
    let n = 0;
    while (nsec3Covers(wildcardCover, `nope${n}.test`)) n++;
    const without = zone.filter((r) => r !== wildcardCover);
    expect(proveNsec3Nxdomain(`nope${n}.test`, zone)).toMatchObject({ status: 'proven' });
    expect(proveNsec3Nxdomain(`nope${n}.test`, without)).toMatchObject({
      status: 'failed',
      code: 'wildcard_not_denied',
    });
  });

  it('NXDOMAIN under a delegation or a DNAME: insecure below an unsigned cut, failed below a signed one', () => {
    expect(proveNsec3Nxdomain('x.unsigned.test', zone)).toMatchObject({
      status: 'insecure',
      code: 'insecure_delegation',
    });
    expect(proveNsec3Nxdomain('x.signed.test', zone)).toMatchObject({
      status: 'failed',
      code: 'delegation_misused',
    });
    expect(proveNsec3Nxdomain('x.dn.test', zone)).toMatchObject({ status: 'failed', code: 'dname_misused' });
  });

  it('NODATA at a delegation for anything but DS; DS at signed and unsigned cuts', () => {
    expect(proveNsec3Nodata('unsigned.test', 'A', zone)).toMatchObject({
      status: 'failed',
      code: 'delegation_misused',
    });
    expect(proveNsec3Nodata('unsigned.test', 'DS', zone)).toMatchObject({
      status: 'proven',
      kind: 'insecure_delegation',
    });
    expect(proveNsec3Nodata('signed.test', 'DS', zone)).toMatchObject({
      status: 'failed',
      code: 'type_exists',
    });
    expect(proveNsec3Nodata('www.test', 'DS', zone)).toMatchObject({ status: 'proven', kind: 'no_ds' });
  });

  it('DS NODATA without a match needs an opt-out span (RFC 5155 §8.6)', () => {
    expect(proveNsec3Nodata('nope.test', 'DS', zone)).toMatchObject({
      status: 'failed',
      code: 'not_opt_out',
    });
    expect(proveNsec3Nodata('nope.test', 'A', zone)).toMatchObject({ status: 'failed', code: 'not_covered' });
  });

  it('a wildcard answer whose next closer name exists', () => {
    expect(proveNsec3WildcardAnswer('www.test', 'test', zone)).toMatchObject({
      status: 'failed',
      code: 'not_covered',
    });
    expect(proveNsec3WildcardAnswer('a.wild.test', 'wild.test', zone)).toMatchObject({
      status: 'proven',
      kind: 'wildcard_answer',
    });
  });

  it('uses one parameter set, the first record’s: records with another salt are not consulted', () => {
    // Under salt ff this record matches www.test and lists AAAA; the zone's chain (no salt) says there is none.
    const salted = nsec3(`${nsec3Hash('www.test', 'ff', 0)}.test`, Buffer.alloc(20, 0xff), ['AAAA'], {
      salt: Buffer.from('ff', 'hex'),
    });
    expect(proveNsec3Nodata('www.test', 'AAAA', [...zone, salted])).toMatchObject({
      status: 'proven',
      kind: 'nodata',
    });
    expect(proveNsec3Nodata('www.test', 'AAAA', [salted, ...zone])).toMatchObject({
      status: 'failed',
      code: 'type_exists',
    });
  });

  it('records of another zone are not used, and none at all prove nothing', () => {
    expect(proveNsec3Nxdomain('nope.other', zone)).toMatchObject({
      status: 'failed',
      code: 'no_denial_records',
    });
    expect(proveNsec3Nodata('www.test', 'AAAA', [])).toMatchObject({
      status: 'failed',
      code: 'no_denial_records',
    });
  });
});

describe('RFC 9276 iterations', () => {
  const names: [string, string[]][] = [
    ['test', ['SOA', 'NS', 'RRSIG']],
    ['www.test', ['A', 'RRSIG']],
  ];

  it(`proves with ${NSEC3_MAX_ITERATIONS} iterations and calls ${NSEC3_MAX_ITERATIONS + 1} insecure`, () => {
    const at150 = chainFor('test', names, { iterations: 150 });
    expect(proveNsec3Nodata('www.test', 'AAAA', at150)).toMatchObject({ status: 'proven', kind: 'nodata' });
    const at151 = chainFor('test', names, { iterations: 151 });
    expect(proveNsec3Nodata('www.test', 'AAAA', at151)).toMatchObject({
      status: 'insecure',
      code: 'nsec3_iterations',
    });
    expect(proveNsec3Nxdomain('nope.test', at151)).toMatchObject({
      status: 'insecure',
      code: 'nsec3_iterations',
    });
  });

  it('finds iterations, a salt and opt-out worth a finding', () => {
    expect(nsec3ParameterFindings({ iterations: 0, salt: Buffer.alloc(0), flags: 0 })).toEqual({
      verdict: 'ok',
      findings: [],
    });
    const appendix = nsec3ParameterFindings({ iterations: 12, salt: SALT, flags: 1 });
    expect(appendix.verdict).toBe('discouraged');
    expect(appendix.findings.map((f) => f.code)).toEqual(['nsec3_iterations', 'nsec3_salt', 'nsec3_opt_out']);
    expect(nsec3ParameterFindings({ iterations: 151, salt: Buffer.alloc(0) })).toMatchObject({
      verdict: 'insecure',
      findings: [{ code: 'nsec3_iterations_insecure' }],
    });
  });
});
