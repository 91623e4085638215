import { describe, expect, it } from 'vitest';
import {
  certificateDnsName,
  certificateDnsNames,
  isoUtc,
  issuerFromDn,
  normalizeSerial,
  parseDistinguishedName,
} from '../../../../src/providers/ct/normalize.js';

describe('certificateDnsName', () => {
  it.each([
    ['www.example.com', 'www.example.com'],
    ['WWW.Example.COM', 'www.example.com'],
    ['example.com.', 'example.com'],
    ['*.example.com', '*.example.com'],
    ['*.API.example.com', '*.api.example.com'],
    // Certificates carry A-labels; a U-label is converted, not dropped.
    ['bücher.example.com', 'xn--bcher-kva.example.com'],
    ['xn--bcher-kva.example.com', 'xn--bcher-kva.example.com'],
  ])('%s → %s', (raw, expected) => {
    expect(certificateDnsName(raw)).toBe(expected);
  });

  it.each([
    ['an email address (crt.sh lists rfc822Name identities)', 'user@example.com'],
    ['a CA name with spaces', 'AS207960 Test Intermediate - example.com'],
    ['an IPv4 address', '192.0.2.1'],
    ['an underscore label', 'under_score.example.com'],
    ['a wildcard that is not the whole first label', 'www*.example.com'],
    ['a wildcard below the first label', 'www.*.example.com'],
    ['two wildcard labels', '*.*.example.com'],
    ['an empty label', 'www..example.com'],
    ['a leading hyphen', '-www.example.com'],
    ['nothing', ''],
  ])('drops %s', (_why, raw) => {
    expect(certificateDnsName(raw)).toBeUndefined();
  });

  it('certificateDnsNames keeps the distinct DNS names, sorted, ignoring null', () => {
    expect(
      certificateDnsNames([
        'www.example.com',
        'Example.com',
        null,
        'user@example.com',
        'WWW.EXAMPLE.COM',
        undefined,
      ]),
    ).toEqual(['example.com', 'www.example.com']);
  });
});

describe('isoUtc', () => {
  it('reads crt.sh timestamps, which carry no zone, as UTC', () => {
    expect(isoUtc('2023-01-13T00:00:00')).toBe('2023-01-13T00:00:00Z');
    expect(isoUtc('2023-03-17T16:26:38.016')).toBe('2023-03-17T16:26:38.016Z');
    expect(isoUtc('2022-03-17T10:02:40.41')).toBe('2022-03-17T10:02:40.410Z');
  });

  it('keeps zoned timestamps (Cert Spotter) and converts offsets to UTC', () => {
    expect(isoUtc('2022-10-22T00:00:00Z')).toBe('2022-10-22T00:00:00Z');
    expect(isoUtc('2016-06-16T02:00:00+02:00')).toBe('2016-06-16T00:00:00Z');
  });

  it('is undefined for anything else', () => {
    for (const v of [null, undefined, '', 'yesterday', 42]) expect(isoUtc(v)).toBeUndefined();
  });
});

describe('normalizeSerial', () => {
  it('lower-case hex without separators, leading zeros kept', () => {
    expect(normalizeSerial('0C1FCB18')).toBe('0c1fcb18');
    expect(normalizeSerial('0c:1f:cb:18')).toBe('0c1fcb18');
  });
  it('null when absent or not hex', () => {
    expect(normalizeSerial(undefined)).toBeNull();
    expect(normalizeSerial(null)).toBeNull();
    expect(normalizeSerial('serial?')).toBeNull();
  });
});

describe('issuer names', () => {
  it('splits a distinguished name, honouring quotes and escapes', () => {
    expect(parseDistinguishedName('C=US, O="thawte, Inc.", CN=thawte SSL CA - G2')).toEqual([
      { type: 'C', value: 'US' },
      { type: 'O', value: 'thawte, Inc.' },
      { type: 'CN', value: 'thawte SSL CA - G2' },
    ]);
    expect(parseDistinguishedName('O=Acme\\, Ltd, CN=Acme CA')).toEqual([
      { type: 'O', value: 'Acme, Ltd' },
      { type: 'CN', value: 'Acme CA' },
    ]);
  });

  it('takes CN and O from real crt.sh issuer names', () => {
    expect(issuerFromDn('C=US, O=DigiCert Inc, CN=DigiCert TLS RSA SHA256 2020 CA1')).toEqual({
      name: 'DigiCert TLS RSA SHA256 2020 CA1',
      organization: 'DigiCert Inc',
    });
    expect(
      issuerFromDn(
        'emailAddress=pki_admin@sungard.com, O=SunGard Availability Services, CN=SAS Public CA v1',
      ),
    ).toEqual({ name: 'SAS Public CA v1', organization: 'SunGard Availability Services' });
  });

  it('keeps a name without a CN whole (crt.sh "Issuer Not Found")', () => {
    expect(issuerFromDn('Issuer Not Found')).toEqual({ name: 'Issuer Not Found', organization: null });
  });
});
