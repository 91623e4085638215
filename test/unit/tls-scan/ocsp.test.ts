/**
 * The OCSP staple verdict against responses made by the real `openssl ocsp` (test/fakes/ocsp-responses.ts),
 * plus the cases openssl will not make (a non-successful status, garbage, no staple).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicOCSPResponse, OCSPResponse, OCSPResponseStatus } from '@peculiar/asn1-ocsp';
import { AsnConvert } from '@peculiar/asn1-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCertificate } from '../../../src/features/tls/certificate.js';
import { TlsScanSchema } from '../../../src/features/tls-scan/tls-scan.schema.js';
import { checkStaple } from '../../../src/tls-scan/ocsp.js';
import { makeOcspResponse, type OcspResponseOptions, opensslAvailable } from '../../fakes/ocsp-responses.js';
import { createPki } from '../../fakes/test-ca.js';

const DAY_MS = 86_400_000;
const CA_NAME = 'CN=netdiag OCSP test CA, O=netdiag tests';
const der = (pem: string) => new X509Certificate(pem).raw;

const openssl = opensslAvailable();
if (!openssl)
  console.warn('tls-scan/ocsp: openssl-made responses SKIPPED, `openssl` is not on PATH (CI installs it)');

describe('checkStaple without openssl', () => {
  const chain = { leaf: Buffer.alloc(0), issuer: undefined };

  it('reports no staple as not stapled, every field null', () => {
    const result = checkStaple(null, chain, new Date());
    expect(result).toEqual({
      stapled: false,
      status: null,
      reason: null,
      produced_at: null,
      this_update: null,
      next_update: null,
      revoked_at: null,
      responder: null,
    });
    expect(Object.keys(result).sort()).toEqual(
      Object.keys(TlsScanSchema.properties.ocsp_stapling.properties).sort(),
    );
  });

  it('names a non-successful response status (tryLater) and calls the staple invalid', () => {
    const tryLater = Buffer.from(
      AsnConvert.serialize(new OCSPResponse({ responseStatus: OCSPResponseStatus.tryLater })),
    );
    const result = checkStaple(tryLater, chain, new Date());
    expect(result.stapled).toBe(true);
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/tryLater/);
  });

  it('calls garbage invalid with why, without throwing', () => {
    for (const bytes of [
      Buffer.from('not an OCSP response at all'),
      Buffer.alloc(0),
      Buffer.from([0x30, 0x82, 0xff]),
    ]) {
      const result = checkStaple(bytes, chain, new Date());
      expect(result).toMatchObject({ stapled: true, status: 'invalid' });
      expect(result.reason).toMatch(/not a well-formed OCSP response/);
    }
  });
});

describe.skipIf(!openssl)('checkStaple on responses from openssl ocsp', () => {
  let dir: string;
  let ca: OcspResponseOptions['ca'];
  let leafPem: string;
  let otherLeafPem: string;
  let sameNameCaPem: string;
  let chain: { leaf: Buffer; issuer: Buffer };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-ocsp-'));
    const pki = await createPki('netdiag OCSP test CA');
    ca = { certPem: pki.caPem, keyPem: pki.caKeyPem };
    leafPem = pki.server.certPem;
    otherLeafPem = (await pki.issue({ dnsNames: ['other.test'] })).certPem;
    // The same name with another key: only the CertID's issuerKeyHash tells them apart.
    sameNameCaPem = (await createPki('netdiag OCSP test CA')).caPem;
    chain = { leaf: der(leafPem), issuer: der(ca.certPem) };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const respond = (opts: Omit<OcspResponseOptions, 'dir' | 'ca' | 'leaf'> & { leaf?: string }) =>
    readFileSync(makeOcspResponse({ dir, ca, leaf: leafPem, ...opts }));

  it('good: signed by the issuer, with its window and the responder name', () => {
    const now = new Date();
    const result = checkStaple(respond({ status: 'good', days: 7 }), chain, now);
    expect(result).toMatchObject({
      stapled: true,
      status: 'good',
      reason: null,
      revoked_at: null,
      responder: CA_NAME,
    });
    const thisUpdate = Date.parse(result.this_update ?? '');
    expect(Math.abs(thisUpdate - now.getTime())).toBeLessThan(DAY_MS);
    expect(Date.parse(result.next_update ?? '') - thisUpdate).toBe(7 * DAY_MS);
    expect(result.produced_at).toBe(new Date(result.produced_at ?? '').toISOString());
    // The responder's name reads as /api/tls prints certificate names.
    expect(result.responder).toBe(parseCertificate(chain.issuer).subject);
  });

  it('revoked: the revocation time and the CRL reason name', () => {
    const revokedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 3 * DAY_MS);
    const result = checkStaple(
      respond({ status: 'revoked', reason: 'keyCompromise', revokedAt }),
      chain,
      new Date(),
    );
    expect(result).toMatchObject({
      status: 'revoked',
      reason: 'keyCompromise',
      revoked_at: revokedAt.toISOString(),
    });
  });

  it('revoked with a SHA-256 CertID and no nextUpdate: cACompromise, next_update null', () => {
    const response = respond({ status: 'revoked', reason: 'cACompromise', certIdHash: 'sha256', days: 0 });
    const basic = AsnConvert.parse(
      AsnConvert.parse(response, OCSPResponse).responseBytes!.response,
      BasicOCSPResponse,
    );
    expect(basic.tbsResponseData.responses[0]!.certID.hashAlgorithm.algorithm).toBe('2.16.840.1.101.3.4.2.1');
    const result = checkStaple(response, chain, new Date(Date.now() + 365 * DAY_MS));
    expect(result).toMatchObject({ status: 'revoked', reason: 'cACompromise', next_update: null });
  });

  it('unknown: the responder does not know the serial', () => {
    expect(checkStaple(respond({ status: 'unknown' }), chain, new Date())).toMatchObject({
      status: 'unknown',
      reason: null,
    });
  });

  it('invalid when signed by a key the issuer has nothing to do with', () => {
    const result = checkStaple(respond({ status: 'good', signer: 'other' }), chain, new Date());
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/did not issue/);
    expect(result.responder).toBe('CN=netdiag test OCSP responder (other)');
  });

  it('invalid when the signature bytes were tampered with', () => {
    const response = respond({ status: 'good' });
    response[response.length - 1]! ^= 0x01; // the signature's last byte: no certs follow it (-resp_no_certs)
    const result = checkStaple(response, chain, new Date());
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/signature does not verify/);
  });

  it.each(['ec', 'rsa', 'rsa-pss', 'ed25519'] as const)(
    'good from a delegated responder with OCSPSigning (%s key)',
    (key) => {
      const result = checkStaple(
        respond({ status: 'good', signer: 'delegated', signerKey: key }),
        chain,
        new Date(),
      );
      expect(result).toMatchObject({
        status: 'good',
        reason: null,
        responder: 'CN=netdiag test OCSP responder (delegated)',
      });
    },
  );

  it('names a responder by key as key:<SHA-1 of its public key>', () => {
    const response = respond({ status: 'good', signer: 'delegated', responderByKey: true });
    const result = checkStaple(response, chain, new Date());
    const outer = AsnConvert.parse(response, OCSPResponse);
    const basic = AsnConvert.parse(outer.responseBytes!.response, BasicOCSPResponse);
    const keyBits = basic.certs![0]!.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey;
    const expected = createHash('sha1').update(Buffer.from(keyBits)).digest('hex');
    expect(result).toMatchObject({ status: 'good', responder: `key:${expected}` });
  });

  it('invalid from a delegated responder whose certificate has expired', () => {
    // The fake issues responders for 30 days; the response itself is current for 90.
    const response = respond({ status: 'good', signer: 'delegated', days: 90 });
    const result = checkStaple(response, chain, new Date(Date.now() + 60 * DAY_MS));
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/whose certificate is not valid at/);
  });

  it('invalid from a responder the issuer certified without the OCSPSigning extended key usage', () => {
    const result = checkStaple(
      respond({ status: 'good', signer: 'delegated-without-eku' }),
      chain,
      new Date(),
    );
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/id-kp-OCSPSigning/);
  });

  it('invalid when the response is about another certificate', () => {
    const result = checkStaple(respond({ status: 'good', leaf: otherLeafPem }), chain, new Date());
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/for another certificate/);
  });

  it('invalid when the issuer given is not the one the CertID names (same name, another key)', () => {
    const result = checkStaple(
      respond({ status: 'good' }),
      { ...chain, issuer: der(sameNameCaPem) },
      new Date(),
    );
    expect(result.status).toBe('invalid');
    expect(result.reason).toMatch(/for another certificate/);
  });

  it('invalid, saying expired, once nextUpdate has passed', () => {
    const result = checkStaple(
      respond({ status: 'good', days: 1 }),
      chain,
      new Date(Date.now() + 30 * DAY_MS),
    );
    expect(result.status).toBe('invalid');
    expect(result.reason).toBe(`expired on ${result.next_update} (nextUpdate has passed)`);
  });

  it('invalid when thisUpdate is ahead of the clock beyond the skew; good within it', () => {
    const response = respond({ status: 'good' });
    const thisUpdate = Date.parse(checkStaple(response, chain, new Date()).this_update ?? '');
    expect(checkStaple(response, chain, new Date(thisUpdate - 60 * 60_000))).toMatchObject({
      status: 'invalid',
    });
    expect(checkStaple(response, chain, new Date(thisUpdate - 60 * 60_000)).reason).toMatch(
      /not valid until/,
    );
    expect(checkStaple(response, chain, new Date(thisUpdate - 60_000)).status).toBe('good');
  });

  it('invalid when the issuer was not sent, still showing the window', () => {
    const result = checkStaple(
      respond({ status: 'good' }),
      { leaf: chain.leaf, issuer: undefined },
      new Date(),
    );
    expect(result).toMatchObject({
      status: 'invalid',
      reason: 'the issuer certificate was not sent, so the signature cannot be checked',
    });
    expect(result.this_update).not.toBeNull();
  });

  it('invalid, not a throw, for a truncated response', () => {
    const response = respond({ status: 'good' });
    const result = checkStaple(response.subarray(0, response.length - 20), chain, new Date());
    expect(result.status).toBe('invalid');
  });
});
