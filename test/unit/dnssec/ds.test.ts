/**
 * DS against DNSKEY (RFC 4034 §5, RFC 4509), which DS records a validator uses
 * (RFC 4035 §5.2, RFC 4509 §3, RFC 6840 §5.2), and RFC 8624's tables as findings.
 * The digests themselves are checked against the RFCs' examples in vectors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  ALGORITHMS,
  algorithmFindings,
  algorithmInfo,
  DIGESTS,
  digestFindings,
  dsDigest,
  dsMatchesKey,
  dsSupported,
  isAlgorithmSupported,
  isDigestSupported,
  keyTag,
  usableDs,
} from '../../../src/dnssec/index.js';
import type { DsData, DsRecord } from '../../../src/dnssec/types.js';
import { makeKey } from './support.js';

const ZONE = 'child.example';

function dsFor(digestType: number, key = makeKey(13, 257)): { key: ReturnType<typeof makeKey>; ds: DsData } {
  const digest = dsDigest(ZONE, key.data, digestType)!;
  return { key, ds: { keyTag: keyTag(key.data), algorithm: key.data.algorithm, digestType, digest } };
}

const record = (data: DsData): DsRecord => ({ name: ZONE, type: 'DS', class: 'IN', ttl: 3600, data });

describe('dsMatchesKey', () => {
  it('matches its own key for each digest type computed here, the owner in any case', () => {
    for (const digestType of [1, 2, 4]) {
      const { key, ds } = dsFor(digestType);
      expect(ds.digest.length).toBe({ 1: 20, 2: 32, 4: 48 }[digestType]);
      expect(dsMatchesKey(ds, 'CHILD.example.', key.data)).toEqual({ ok: true });
    }
  });

  it('names each way a DS misses a key', () => {
    const { key, ds } = dsFor(2);
    const code = (d: DsData, data = key.data, owner = ZONE, keyOwner = ZONE) =>
      (dsMatchesKey(d, owner, data, keyOwner) as { code?: string }).code;
    expect(code({ ...ds, keyTag: (ds.keyTag + 1) & 0xffff })).toBe('ds_key_tag_mismatch');
    expect(code({ ...ds, algorithm: 8 })).toBe('ds_algorithm_mismatch');
    expect(code({ ...ds, digest: Buffer.from(ds.digest.map((b, i) => (i === 5 ? b ^ 1 : b))) })).toBe(
      'ds_digest_mismatch',
    );
    expect(code({ ...ds, digestType: 3 })).toBe('ds_digest_unsupported');
    expect(code(ds, key.data, ZONE, 'other.example')).toBe('ds_owner_mismatch');
    // The digest covers the owner name: the same key under another name is another digest.
    expect(dsDigest('other.example', key.data, 2)).not.toEqual(ds.digest);
    const notZone = { ...key.data, flags: 1 };
    expect(code({ ...ds, keyTag: keyTag(notZone) }, notZone)).toBe('ds_key_not_zone_key');
  });
});

describe('usableDs', () => {
  it('drops DS records of unsupported algorithms or digests (RFC 4035 §5.2: none left is insecure)', () => {
    const { ds } = dsFor(2);
    const gost = { ...ds, digestType: 3 };
    const unknownAlgorithm = { ...ds, algorithm: 253 };
    expect(dsSupported(gost)).toBe(false);
    expect(dsSupported(unknownAlgorithm)).toBe(false);
    expect(usableDs([record(gost), record(unknownAlgorithm)])).toEqual([]);
    expect(usableDs([record(gost), record(ds)]).map((r) => r.data)).toEqual([ds]);
  });

  it('ignores SHA-1 DS records when a SHA-256 one is there (RFC 4509 §3)', () => {
    const key = makeKey(13, 257);
    const sha1 = dsFor(1, key).ds;
    const sha256 = dsFor(2, key).ds;
    const sha384 = dsFor(4, key).ds;
    expect(usableDs([record(sha1), record(sha256), record(sha384)]).map((r) => r.data.digestType)).toEqual([
      2, 4,
    ]);
    expect(usableDs([record(sha1), record(sha384)]).map((r) => r.data.digestType)).toEqual([1, 4]);
  });
});

describe('RFC 8624 tables', () => {
  it('lists the algorithms and digests with their requirements', () => {
    expect(algorithmInfo(8)).toMatchObject({ mnemonic: 'RSASHA256', signing: 'MUST', validation: 'MUST' });
    expect(algorithmInfo(5)).toMatchObject({ signing: 'NOT RECOMMENDED', validation: 'MUST' });
    expect(algorithmInfo(12)).toMatchObject({ signing: 'MUST NOT', validation: 'MAY', supported: false });
    expect(ALGORITHMS.filter((a) => a.supported).map((a) => a.number)).toEqual([5, 7, 8, 10, 13, 14, 15, 16]);
    expect(DIGESTS.find((d) => d.number === 1)).toMatchObject({ signing: 'MUST NOT', validation: 'MUST' });
    expect([0, 1, 2, 3, 4, 5].filter(isDigestSupported)).toEqual([1, 2, 4]);
    expect(isAlgorithmSupported(253)).toBe(false);
  });

  it('finds RSASHA1 signing, short RSA keys and SHA-1 DS records', () => {
    expect(algorithmFindings(5, 2048).map((f) => f.code)).toEqual(['algorithm_not_recommended']);
    expect(algorithmFindings(8, 1024).map((f) => f.code)).toEqual(['rsa_key_short']);
    expect(algorithmFindings(7, 1024).map((f) => f.code)).toEqual([
      'algorithm_not_recommended',
      'rsa_key_short',
    ]);
    expect(algorithmFindings(13, 256)).toEqual([]);
    expect(algorithmFindings(1).map((f) => f.code)).toEqual(['algorithm_must_not_sign']);
    expect(digestFindings(1).map((f) => f.code)).toEqual(['digest_must_not_sign']);
    expect(digestFindings(2)).toEqual([]);
  });
});
