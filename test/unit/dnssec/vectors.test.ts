/**
 * The examples the DNSSEC RFCs publish, copied from their text: keys, key tags,
 * DS digests and signatures made by other implementations. Each signature here
 * verifies only if the canonical form, the signed data, the key format and the
 * algorithm's verifier are all right, and fails once a byte of it changes.
 */
import { describe, expect, it } from 'vitest';
import {
  dnskeyInfo,
  dsDigest,
  dsMatchesKey,
  keyTag,
  signedData,
  verifyRrsig,
} from '../../../src/dnssec/index.js';
import type { DnskeyData, DnsRecord, RrsigData } from '../../../src/dnssec/types.js';
import { dnskeyRecord, flipped, rr, rrsigRecord, t } from './support.js';

const b64 = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'base64');
const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

interface Example {
  title: string;
  zone: string;
  key: DnskeyData;
  tag: number;
  bits: number;
  rrset: DnsRecord[];
  sig: Omit<RrsigData, 'signature'> & { signature: Buffer };
  /** A time inside the signature's window. */
  now: Date;
}

const wwwExampleNet = (address: string) => [rr('www.example.net', 'A', address)];

const EXAMPLES: Example[] = [
  {
    // RFC 5702 §6.1 (RSA/SHA-256 key and signature).
    title: 'RFC 5702 §6.1 RSASHA256',
    zone: 'example.net',
    key: {
      flags: 256,
      algorithm: 8,
      key: b64(`AwEAAcFcGsaxxdgiuuGmCkVImy4h99CqT7jwY3pexPGcnUFtR2Fh36BponcwtkZ4cAgtvd4Qs8P
                kxUdp6p/DlUmObdk=`),
    },
    tag: 9033,
    bits: 512,
    rrset: wwwExampleNet('192.0.2.91'),
    sig: {
      typeCovered: 'A',
      algorithm: 8,
      labels: 3,
      originalTTL: 3600,
      expiration: t('20300101000000'),
      inception: t('20000101000000'),
      keyTag: 9033,
      signersName: 'example.net',
      signature: b64(`kRCOH6u7l0QGy9qpC9l1sLncJcOKFLJ7GhiUOibu4teYp5VE9RncriShZNz85mwlMgNEa
                      cFYK/lPtPiVYP4bwg==`),
    },
    now: new Date('2020-01-01T00:00:00Z'),
  },
  {
    // RFC 5702 §6.2 (RSA/SHA-512 key and signature).
    title: 'RFC 5702 §6.2 RSASHA512',
    zone: 'example.net',
    key: {
      flags: 256,
      algorithm: 10,
      key: b64(`AwEAAdHoNTOW+et86KuJOWRDp1pndvwb6Y83nSVXXyLA3DLroROUkN6X0O6pnWnjJQujX/AyhqFD
                xj13tOnD9u/1kTg7cV6rklMrZDtJCQ5PCl/D7QNPsgVsMu1J2Q8gpMpztNFLpPBz1bWXjDtaR7ZQBlZ3PFY12ZTSncorffcGmhOL`),
    },
    tag: 3740,
    bits: 1024,
    rrset: wwwExampleNet('192.0.2.91'),
    sig: {
      typeCovered: 'A',
      algorithm: 10,
      labels: 3,
      originalTTL: 3600,
      expiration: t('20300101000000'),
      inception: t('20000101000000'),
      keyTag: 3740,
      signersName: 'example.net',
      signature: b64(`tsb4wnjRUDnB1BUi+t6TMTXThjVnG+eCkWqjvvjhzQL1d0YRoOe0CbxrVDYd0xDtsuJRa
                      eUw1ep94PzEWzr0iGYgZBWm/zpq+9fOuagYJRfDqfReKBzMweOLDiNa8iP5g9vMhpuv6OPlvpXwm9Sa9ZXIbNl1MBGk0fthPgxdDLw=`),
    },
    now: new Date('2020-01-01T00:00:00Z'),
  },
  {
    // RFC 6605 §6.1 (P-256); the published signature is randomized, so it is verified, not re-made.
    title: 'RFC 6605 §6.1 ECDSAP256SHA256',
    zone: 'example.net',
    key: {
      flags: 257,
      algorithm: 13,
      key: b64('GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA=='),
    },
    tag: 55648,
    bits: 256,
    rrset: wwwExampleNet('192.0.2.1'),
    sig: {
      typeCovered: 'A',
      algorithm: 13,
      labels: 3,
      originalTTL: 3600,
      expiration: t('20100909100439'),
      inception: t('20100812100439'),
      keyTag: 55648,
      signersName: 'example.net',
      signature: b64(
        'qx6wLYqmh+l9oCKTN6qIc+bw6ya+KJ8oMz0YP107epXAyGmt+3SNruPFKG7tZoLBLlUzGGus7ZwmwWep666VCw==',
      ),
    },
    now: new Date('2010-08-20T00:00:00Z'),
  },
  {
    // RFC 6605 §6.2 (P-384).
    title: 'RFC 6605 §6.2 ECDSAP384SHA384',
    zone: 'example.net',
    key: {
      flags: 257,
      algorithm: 14,
      key: b64(`xKYaNhWdGOfJ+nPrL8/arkwf2EY3MDJ+SErKivBVSum1w/egsXvSADtNJhyem5RCOpgQ6K8X1DRSEkrbYQ+OB+v8
                /uX45NBwY8rp65F6Glur8I/mlVNgF6W/qTI37m40`),
    },
    tag: 10771,
    bits: 384,
    rrset: wwwExampleNet('192.0.2.1'),
    sig: {
      typeCovered: 'A',
      algorithm: 14,
      labels: 3,
      originalTTL: 3600,
      expiration: t('20100909102025'),
      inception: t('20100812102025'),
      keyTag: 10771,
      signersName: 'example.net',
      signature: b64(`/L5hDKIvGDyI1fcARX3z65qrmPsVz73QD1Mr5CEqOiLP95hxQouuroGCeZOvzFaxsT8Glr74
                      hbavRKayJNuydCuzWTSSPdz7wnqXL5bdcJzusdnI0RSMROxxwGipWcJm`),
    },
    now: new Date('2010-08-20T00:00:00Z'),
  },
  // RFC 8080 §6.1, both Ed25519 examples. The document's RRSIG lines read
  // "RRSIG MX 3 3600 ( ... example.com. (": the algorithm field is missing (an
  // erratum); restored as algorithm 15 with Labels 2 (example.com has two labels)
  // the signatures verify, as miekg/dns's TestRFC8080Ed25519Example1/2 read them.
  ...(
    [
      [
        'l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=',
        3613,
        'oL9krJun7xfBOIWcGHi7mag5/hdZrKWw15jPGrHpjQeRAvTdszaPD+QLs3fx8A4M3e23mRZ9VrbpMngwcrqNAg==',
      ],
      [
        'zPnZ/QwEe7S8C5SPz2OfS5RR40ATk2/rYnE9xHIEijs=',
        35217,
        'zXQ0bkYgQTEFyfLyi9QoiY6D8ZdYo4wyUhVioYZXFdT410QPRITQSqJSnzQoSm5poJ7gD7AQR0O7KuI5k2pcBg==',
      ],
    ] as const
  ).map(
    ([key, tag, signature], i): Example => ({
      title: `RFC 8080 §6.1 ED25519 example ${i + 1}`,
      zone: 'example.com',
      key: { flags: 257, algorithm: 15, key: b64(key) },
      tag,
      bits: 256,
      rrset: [rr('example.com', 'MX', { preference: 10, exchange: 'mail.example.com' })],
      sig: {
        typeCovered: 'MX',
        algorithm: 15,
        labels: 2,
        originalTTL: 3600,
        expiration: 1440021600,
        inception: 1438207200,
        keyTag: tag,
        signersName: 'example.com',
        signature: b64(signature),
      },
      now: new Date('2015-08-01T00:00:00Z'),
    }),
  ),
];

describe('RFC signature examples', () => {
  for (const ex of EXAMPLES) {
    describe(ex.title, () => {
      const input = () => ({
        rrset: ex.rrset,
        rrsig: rrsigRecord(ex.rrset[0]!.name, ex.sig),
        dnskey: dnskeyRecord(ex.zone, ex.key),
        now: ex.now,
      });

      it('has the key tag and key size the RFC gives', () => {
        expect(keyTag(ex.key)).toBe(ex.tag);
        const info = dnskeyInfo(ex.key);
        expect(info).toMatchObject({ supported: true, keyTag: ex.tag, bits: ex.bits, zoneKey: true });
        expect(info.sep).toBe(ex.key.flags === 257);
      });

      it('verifies the published signature', () => {
        expect(verifyRrsig(input())).toMatchObject({ ok: true, keyTag: ex.tag, algorithm: ex.key.algorithm });
      });

      it('verifies it whatever the owner names’ case and the records’ TTL (canonical form, original TTL)', () => {
        const shouted = ex.rrset.map((r) => ({ ...r, name: r.name.toUpperCase(), ttl: 17 }));
        const { rrsig, dnskey, now } = input();
        const sig = {
          ...rrsig,
          name: rrsig.name.toUpperCase(),
          data: { ...rrsig.data, signersName: ex.zone.toUpperCase() },
        };
        expect(verifyRrsig({ rrset: shouted, rrsig: sig, dnskey, now }).ok).toBe(true);
      });

      it('refuses the signature with one bit changed, and the data with one bit changed', () => {
        const base = input();
        const badSig = {
          ...base.rrsig,
          data: { ...base.rrsig.data, signature: flipped(ex.sig.signature, 7) },
        };
        expect(verifyRrsig({ ...base, rrsig: badSig })).toMatchObject({
          ok: false,
          code: 'signature_invalid',
        });
        const later = { ...base.rrsig, data: { ...base.rrsig.data, originalTTL: ex.sig.originalTTL + 1 } };
        expect(verifyRrsig({ ...base, rrsig: later })).toMatchObject({
          ok: false,
          code: 'signature_invalid',
        });
        expect(signedData(later.data, ex.rrset)).not.toEqual(signedData(ex.sig, ex.rrset));
      });

      it('is outside its window a second after it ends (no skew)', () => {
        const after = new Date((ex.sig.expiration + 1) * 1000);
        expect(verifyRrsig({ ...input(), now: after, skewSeconds: 0 })).toMatchObject({
          ok: false,
          code: 'signature_expired',
        });
      });
    });
  }
});

describe('RFC DS examples', () => {
  // RFC 4034 §5.4: dskey.example.com. DNSKEY 256 3 5 (...) ; key id = 60485, and its SHA-1 DS.
  const rfc4034Key: DnskeyData = {
    flags: 256,
    algorithm: 5,
    key: b64(`AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZ
              DRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9Xzc
              nOf+EPbtG9DMBmADjFDc2w/rljwvFw==`),
  };

  it('RFC 4034 §5.4: key tag 60485 and its SHA-1 digest', () => {
    expect(keyTag(rfc4034Key)).toBe(60485);
    expect(dsDigest('dskey.example.com', rfc4034Key, 1)).toEqual(
      hex('2BB183AF5F22588179A53B0A98631FAD1A292118'),
    );
    expect(dnskeyInfo(rfc4034Key)).toMatchObject({ algorithmName: 'RSASHA1', bits: 1024, supported: true });
  });

  it('RFC 4509 §2.3: the same key’s SHA-256 digest', () => {
    const digest = hex('D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A');
    expect(dsDigest('dskey.example.com', rfc4034Key, 2)).toEqual(digest);
    const ds = { keyTag: 60485, algorithm: 5, digestType: 2, digest };
    expect(dsMatchesKey(ds, 'DSKEY.Example.COM', rfc4034Key)).toEqual({ ok: true });
  });

  it('RFC 6605 §6.1 and §6.2: SHA-256 and SHA-384 DS of the ECDSA keys', () => {
    const p256 = EXAMPLES[2]!.key;
    const p384 = EXAMPLES[3]!.key;
    expect(dsDigest('example.net', p256, 2)).toEqual(
      hex('b4c8c1fe2e7477127b27115656ad6256f424625bf5c1e2770ce6d6e37df61d17'),
    );
    expect(dsDigest('example.net', p384, 4)).toEqual(
      hex('72d7b62976ce06438e9c0bf319013cf801f09ecc84b8d7e9495f27e305c6a9b0563a9b5f4d288405c3008a946df983d6'),
    );
  });

  it('the root zone: KSK-2017 (key tag 20326) and the DS IANA publishes for it (root-anchors.xml)', () => {
    const ksk: DnskeyData = {
      flags: 257,
      algorithm: 8,
      key: b64(`AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kv
                ArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+e
                oZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwN
                R1AkUTV74bU=`),
    };
    const digest = hex('E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D');
    expect(keyTag(ksk)).toBe(20326);
    expect(dnskeyInfo(ksk)).toMatchObject({ sep: true, bits: 2048 });
    for (const root of ['.', '']) expect(dsDigest(root, ksk, 2)).toEqual(digest);
    expect(dsMatchesKey({ keyTag: 20326, algorithm: 8, digestType: 2, digest }, '.', ksk)).toEqual({
      ok: true,
    });
  });

  it('RFC 8080 §6.1: SHA-256 DS of the Ed25519 keys', () => {
    expect(dsDigest('example.com', EXAMPLES[4]!.key, 2)).toEqual(
      hex('3aa5ab37efce57f737fc1627013fee07bdf241bd10f3b1964ab55c78e79a304b'),
    );
    expect(dsDigest('example.com', EXAMPLES[5]!.key, 2)).toEqual(
      hex('401781b934e392de492ec77ae2e15d70f6575a1c0bc59c5275c04ebe80c6614c'),
    );
  });
});
