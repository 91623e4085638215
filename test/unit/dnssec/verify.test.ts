/**
 * verifyRrsig and verifyRRset against keys node:crypto makes at test time, for every algorithm
 * it supports, and every code of the catalogue: each negative case changes one
 * thing of a signature that verifies.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SKEW_SECONDS,
  dnskeyInfo,
  keyTag,
  MAX_VERIFICATIONS,
  rrsigTime,
  serialDiff,
  type VerifyRrsigInput,
  validityWindow,
  verifyRRset,
  verifyRrsig,
} from '../../../src/dnssec/index.js';
import type { DnskeyData } from '../../../src/dnssec/types.js';
import { dnskeyRecord, flipped, makeKey, rr, signRRset, t } from './support.js';

const NOW = new Date('2020-06-01T00:00:00Z');
const ZONE = 'example.org';

function signed(algorithm: number, options: { flags?: number; rsaBits?: number } = {}) {
  const key = makeKey(algorithm, options.flags ?? 256, options.rsaBits);
  const tag = keyTag(key.data);
  const rrset = [rr('www.example.org', 'A', '192.0.2.1'), rr('www.example.org', 'A', '192.0.2.2')];
  const input: VerifyRrsigInput = {
    rrset,
    rrsig: signRRset(rrset, key, ZONE, tag),
    dnskey: dnskeyRecord(ZONE, key.data),
    now: NOW,
  };
  return { key, tag, rrset, input };
}

describe('verifyRrsig with keys made at test time', () => {
  for (const algorithm of [5, 7, 8, 10, 13, 14, 15, 16]) {
    it(`algorithm ${algorithm}: verifies, and refuses a flipped byte in the signature or in the data`, () => {
      const { input, tag } = signed(algorithm);
      expect(verifyRrsig(input)).toMatchObject({ ok: true, keyTag: tag, algorithm });
      const sig = input.rrsig.data.signature;
      for (const at of [0, sig.length >> 1, -1]) {
        const rrsig = { ...input.rrsig, data: { ...input.rrsig.data, signature: flipped(sig, at) } };
        expect(verifyRrsig({ ...input, rrsig })).toMatchObject({ ok: false, code: 'signature_invalid' });
      }
      const rrset = [input.rrset[0]!, rr('www.example.org', 'A', '192.0.2.3')];
      expect(verifyRrsig({ ...input, rrset })).toMatchObject({ ok: false, code: 'signature_invalid' });
    });
  }

  it('does not depend on the order of the RRset nor on duplicates in it', () => {
    const { input } = signed(13);
    const rrset = [input.rrset[1]!, input.rrset[0]!, input.rrset[1]!];
    expect(verifyRrsig({ ...input, rrset }).ok).toBe(true);
  });

  it('accepts an RSA key whose exponent has the 3-octet length form (RFC 3110 §2)', () => {
    const { key, input } = signed(8);
    const e = key.data.key.subarray(1, 1 + key.data.key[0]!);
    const modulus = key.data.key.subarray(1 + e.length);
    const long: DnskeyData = { ...key.data, key: Buffer.concat([Buffer.from([0, 0, e.length]), e, modulus]) };
    const rrsig = signRRset(input.rrset, key, ZONE, keyTag(long));
    expect(verifyRrsig({ ...input, rrsig, dnskey: dnskeyRecord(ZONE, long) }).ok).toBe(true);
  });
});

describe('the catalogue of failures', () => {
  it('signature_invalid: an ECDSA signature of the wrong length', () => {
    const { input } = signed(13);
    const rrsig = {
      ...input.rrsig,
      data: { ...input.rrsig.data, signature: input.rrsig.data.signature.subarray(1) },
    };
    expect(verifyRrsig({ ...input, rrsig })).toMatchObject({ ok: false, code: 'signature_invalid' });
  });

  it('key_mismatch: another key tag, another algorithm, another owner', () => {
    const { input, tag } = signed(13);
    const withTag = { ...input.rrsig, data: { ...input.rrsig.data, keyTag: (tag + 1) & 0xffff } };
    expect(verifyRrsig({ ...input, rrsig: withTag })).toMatchObject({ ok: false, code: 'key_mismatch' });
    const otherKey = makeKey(13);
    expect(verifyRrsig({ ...input, dnskey: dnskeyRecord(ZONE, otherKey.data) })).toMatchObject({
      ok: false,
      code: 'key_mismatch',
    });
    const withAlgorithm = { ...input.rrsig, data: { ...input.rrsig.data, algorithm: 8 } };
    expect(verifyRrsig({ ...input, rrsig: withAlgorithm })).toMatchObject({
      ok: false,
      code: 'key_mismatch',
    });
    expect(verifyRrsig({ ...input, dnskey: dnskeyRecord('other.org', input.dnskey.data) })).toMatchObject({
      ok: false,
      code: 'key_mismatch',
    });
  });

  it('signer_mismatch: a signer that is not the owner’s zone, or a DS signed at its own name', () => {
    const key = makeKey(13);
    const tag = keyTag(key.data);
    const rrset = [rr('www.example.org', 'A', '192.0.2.1')];
    const rrsig = signRRset(rrset, key, 'other.org', tag);
    expect(
      verifyRrsig({ rrset, rrsig, dnskey: dnskeyRecord('other.org', key.data), now: NOW }),
    ).toMatchObject({
      ok: false,
      code: 'signer_mismatch',
    });
    const ds = [
      rr('child.example.org', 'DS', { keyTag: 1, algorithm: 13, digestType: 2, digest: Buffer.alloc(32) }),
    ];
    const dsSig = signRRset(ds, key, 'child.example.org', tag);
    const dsInput = {
      rrset: ds,
      rrsig: dsSig,
      dnskey: dnskeyRecord('child.example.org', key.data),
      now: NOW,
    };
    expect(verifyRrsig(dsInput)).toMatchObject({ ok: false, code: 'signer_mismatch' });
    const byParent = {
      ...dsInput,
      rrsig: signRRset(ds, key, ZONE, tag),
      dnskey: dnskeyRecord(ZONE, key.data),
    };
    expect(verifyRrsig(byParent).ok).toBe(true);
  });

  it('type_mismatch, owner_mismatch, class_mismatch, rrset_malformed', () => {
    const { input } = signed(15);
    const aaaa = [rr('www.example.org', 'AAAA', '2001:db8::1')];
    expect(verifyRrsig({ ...input, rrset: aaaa })).toMatchObject({ ok: false, code: 'type_mismatch' });
    const elsewhere = input.rrset.map((r) => ({ ...r, name: 'mail.example.org' }));
    expect(verifyRrsig({ ...input, rrset: elsewhere })).toMatchObject({ ok: false, code: 'owner_mismatch' });
    expect(verifyRrsig({ ...input, rrsig: { ...input.rrsig, class: 'CH' } })).toMatchObject({
      ok: false,
      code: 'class_mismatch',
    });
    expect(verifyRrsig({ ...input, rrset: [] })).toMatchObject({ ok: false, code: 'rrset_malformed' });
    const mixed = [input.rrset[0]!, rr('mail.example.org', 'A', '192.0.2.9')];
    expect(verifyRrsig({ ...input, rrset: mixed })).toMatchObject({ ok: false, code: 'rrset_malformed' });
  });

  it('labels_mismatch: more labels than the owner has', () => {
    const { input } = signed(13);
    const rrsig = { ...input.rrsig, data: { ...input.rrsig.data, labels: 4 } };
    expect(verifyRrsig({ ...input, rrsig })).toMatchObject({ ok: false, code: 'labels_mismatch' });
  });

  it('key_not_zone_key and key_revoked (which may still sign its own DNSKEY RRset)', () => {
    const plain = signed(13, { flags: 0 });
    expect(verifyRrsig(plain.input)).toMatchObject({ ok: false, code: 'key_not_zone_key' });
    const revoked = signed(13, { flags: 257 | 0x80 });
    expect(verifyRrsig(revoked.input)).toMatchObject({ ok: false, code: 'key_revoked' });
    const keys = [rr(ZONE, 'DNSKEY', revoked.key.data)];
    const selfSigned = signRRset(keys, revoked.key, ZONE, revoked.tag);
    expect(verifyRrsig({ ...revoked.input, rrset: keys, rrsig: { ...selfSigned } }).ok).toBe(true);
  });

  it('algorithm_unsupported and key_malformed are answers, never exceptions', () => {
    const { input } = signed(13);
    for (const algorithm of [1, 3, 6, 12, 253]) {
      const data = { flags: 256, algorithm, key: Buffer.alloc(64, 1) };
      const rrsig = { ...input.rrsig, data: { ...input.rrsig.data, algorithm, keyTag: keyTag(data) } };
      expect(verifyRrsig({ ...input, rrsig, dnskey: dnskeyRecord(ZONE, data) })).toMatchObject({
        ok: false,
        code: 'algorithm_unsupported',
      });
    }
    const short = { ...input.dnskey.data, key: input.dnskey.data.key.subarray(1) };
    const rrsig = { ...input.rrsig, data: { ...input.rrsig.data, keyTag: keyTag(short) } };
    expect(verifyRrsig({ ...input, rrsig, dnskey: dnskeyRecord(ZONE, short) })).toMatchObject({
      ok: false,
      code: 'key_malformed',
    });
  });

  it('signature_expired and signature_not_yet_valid, with the skew allowance at its edges', () => {
    const key = makeKey(13);
    const tag = keyTag(key.data);
    const rrset = [rr('www.example.org', 'A', '192.0.2.1')];
    const dnskey = dnskeyRecord(ZONE, key.data);
    const at = Math.floor(NOW.getTime() / 1000);
    const expired = signRRset(rrset, key, ZONE, tag, { inception: at - 86400, expiration: at - 301 });
    expect(verifyRrsig({ rrset, rrsig: expired, dnskey, now: NOW })).toMatchObject({
      ok: false,
      code: 'signature_expired',
    });
    expect(verifyRrsig({ rrset, rrsig: expired, dnskey, now: NOW, skewSeconds: 301 }).ok).toBe(true);
    const early = signRRset(rrset, key, ZONE, tag, { inception: at + 301, expiration: at + 86400 });
    expect(verifyRrsig({ rrset, rrsig: early, dnskey, now: NOW })).toMatchObject({
      ok: false,
      code: 'signature_not_yet_valid',
    });
    expect(verifyRrsig({ rrset, rrsig: early, dnskey, now: NOW, skewSeconds: 301 }).ok).toBe(true);
    expect(DEFAULT_SKEW_SECONDS).toBe(300);
  });

  it('reports how long a valid signature has left', () => {
    const { input } = signed(15);
    const result = verifyRrsig(input);
    expect(result.ok && result.expiresIn).toBe(t('20300101000000') - Math.floor(NOW.getTime() / 1000));
  });
});

describe('serial-number time (RFC 4034 §3.1.5, RFC 1982)', () => {
  it('compares across the 2106 wrap of 32-bit seconds', () => {
    const wrap = 2 ** 32;
    const now = new Date((wrap + 1000) * 1000); // 1000 s after 2106-02-07T06:28:16Z
    expect(validityWindow(wrap - 1000, 5000, now, 0)).toMatchObject({ state: 'valid', expiresIn: 4000 });
    expect(validityWindow(wrap - 1000, 500, now, 0)).toMatchObject({ state: 'expired', expiresIn: -500 });
    expect(validityWindow(2000, 5000, now, 0).state).toBe('not_yet_valid');
    expect(serialDiff(5, 2 ** 32 - 5)).toBe(10);
    expect(rrsigTime(5000, now)).toBe('2106-02-07T07:51:36Z');
  });

  it('reads a window from the last century as past, not as 136 years ahead', () => {
    expect(validityWindow(t('19990101000000'), t('19991231000000'), NOW, 0).state).toBe('expired');
  });
});

describe('dnskeyInfo', () => {
  it('reads flags and sizes', () => {
    expect(dnskeyInfo(makeKey(8, 257, 2048).data)).toMatchObject({ sep: true, zoneKey: true, bits: 2048 });
    expect(dnskeyInfo(makeKey(16).data)).toMatchObject({
      algorithmName: 'ED448',
      bits: 456,
      supported: true,
    });
    expect(dnskeyInfo({ flags: 385, algorithm: 15, key: makeKey(15).data.key })).toMatchObject({
      revoked: true,
    });
  });

  it('takes an RSA/MD5 key tag from the modulus, not the checksum (RFC 4034 Appendix B.1)', () => {
    const modulus = Buffer.concat([Buffer.alloc(60, 0xee), Buffer.from([0x12, 0x34, 0x56])]);
    const md5 = { flags: 256, algorithm: 1, key: Buffer.concat([Buffer.from([3, 1, 0, 1]), modulus]) };
    expect(keyTag(md5)).toBe(0x1234);
    expect(keyTag({ ...md5, algorithm: 5 })).not.toBe(0x1234);
    expect(dnskeyInfo(md5)).toMatchObject({ supported: false, problem: 'algorithm_unsupported' });
  });

  it('refuses an ECDSA point that is not on the curve', () => {
    const info = dnskeyInfo({ flags: 256, algorithm: 13, key: Buffer.alloc(64, 1) });
    expect(info).toMatchObject({ supported: false, problem: 'key_malformed' });
    expect(info.key).toBeUndefined();
  });

  it('refuses RSA keys without a modulus, and over 4096 bits (RFC 3110 §2)', () => {
    expect(dnskeyInfo({ flags: 256, algorithm: 8, key: Buffer.from([3, 1, 0, 1]) }).problem).toBe(
      'key_malformed',
    );
    const big = Buffer.concat([Buffer.from([3, 1, 0, 1]), Buffer.alloc(513, 0xff)]);
    expect(dnskeyInfo({ flags: 256, algorithm: 8, key: big })).toMatchObject({
      problem: 'key_malformed',
      bits: 4104,
    });
  });
});

describe('verifyRRset', () => {
  const rrset = [rr('www.example.org', 'A', '192.0.2.1')];
  const zsk = makeKey(13);
  const ksk = makeKey(15, 257);
  const dnskeys = [dnskeyRecord(ZONE, ksk.data), dnskeyRecord(ZONE, zsk.data)];
  const good = signRRset(rrset, zsk, ZONE, keyTag(zsk.data));

  it('finds the RRSIG and the DNSKEY that verify among others, and says what the others were', () => {
    const broken = { ...good, data: { ...good.data, signature: flipped(good.data.signature, 3) } };
    const otherType = signRRset([rr('www.example.org', 'AAAA', '2001:db8::1')], zsk, ZONE, keyTag(zsk.data));
    const result = verifyRRset({ rrset, rrsigs: [otherType, broken, good], dnskeys, now: NOW });
    expect(result).toMatchObject({ ok: true, rrsig: good, dnskey: dnskeys[1] });
    expect(result.attempts.map((a) => a.code)).toEqual(['signature_invalid', undefined]);
  });

  it('rrsig_missing, dnskey_missing, and the most telling reason when none verifies', () => {
    expect(verifyRRset({ rrset, rrsigs: [], dnskeys, now: NOW })).toMatchObject({
      ok: false,
      code: 'rrsig_missing',
    });
    expect(verifyRRset({ rrset, rrsigs: [good], dnskeys: [dnskeys[0]!], now: NOW })).toMatchObject({
      ok: false,
      code: 'dnskey_missing',
    });
    const at = Math.floor(NOW.getTime() / 1000);
    const expired = signRRset(rrset, zsk, ZONE, keyTag(zsk.data), {
      inception: at - 9000,
      expiration: at - 4000,
    });
    const byKsk = signRRset(rrset, ksk, ZONE, 4242);
    const result = verifyRRset({ rrset, rrsigs: [byKsk, expired], dnskeys, now: NOW });
    expect(result).toMatchObject({ ok: false, code: 'signature_expired' });
    expect(result.attempts.map((a) => a.code)).toEqual(['dnskey_missing', 'signature_expired']);
  });

  it('stops after its budget of signature checks (KeyTrap, CVE-2023-50387)', () => {
    const bad = Array.from({ length: 12 }, (_, i) => ({
      ...good,
      data: { ...good.data, signature: flipped(good.data.signature, i) },
    }));
    const result = verifyRRset({ rrset, rrsigs: [...bad, good], dnskeys, now: NOW });
    expect(result).toMatchObject({ ok: false, code: 'verification_limit' });
    expect(result.attempts).toHaveLength(MAX_VERIFICATIONS);
    expect(verifyRRset({ rrset, rrsigs: [...bad, good], dnskeys, now: NOW, maxVerifications: 13 }).ok).toBe(
      true,
    );
  });
});
