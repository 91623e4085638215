/**
 * DANE for SMTP (RFC 7672 §3, RFC 6698 §2.1, RFC 7671 §5.2.2) against real certificates from
 * the test PKI: DANE-EE by certificate and by key with every matching type, the stale record of
 * a rollover, DANE-TA on an intermediate (chain, name, dates, CA flag), trust anchors the server
 * does not send, unusable and unvalidated records, and the DNS outcomes that are no records or
 * no answer. Digests of one case come from the openssl command line, independent of our code.
 */

import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DnsOutcome, TlsaRecord } from '../../../../src/features/email/types.js';
import { type DaneInput, type DnssecView, evaluateDane } from '../../../../src/features/mail-tls/dane.js';
import {
  createPki,
  getTestPki,
  type IssuedCert,
  type TestIssuer,
  type TestPki,
} from '../../../fakes/test-ca.js';
import { makeCert } from '../tls/make-cert.js';

const HOST = 'mx.dane.test';
const TLSA_NAME = `_25._tcp.${HOST}`;
const DAY = 86_400_000;
/** The intermediate's subject as the reports print it (OpenSSL's one-line form). */
const INTERMEDIATE = 'CN=DANE test intermediate, O=netdiag tests';

const der = (pem: string) => new X509Certificate(pem).raw;
/** The SubjectPublicKeyInfo as Node's OpenSSL exports it: a second opinion on the bytes dane.ts takes from the certificate. */
const spki = (pem: string) => new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
const hex = (bytes: Buffer) => bytes.toString('hex').toUpperCase();
const sha256 = (bytes: Buffer) => hex(createHash('sha256').update(bytes).digest());
const sha512 = (bytes: Buffer) => hex(createHash('sha512').update(bytes).digest());

const tlsa = (usage: number, selector: number, matchingType: number, data: string): TlsaRecord => ({
  usage,
  selector,
  matchingType,
  data,
});
const answer = (records: TlsaRecord[]): DnsOutcome<TlsaRecord> => ({
  kind: 'answer',
  rcode: 'NOERROR',
  records,
  aliases: [],
});

/** netdiag's own verdicts on the TLSA answer, as features/dnssec gives them. */
const SECURE: DnssecView = { status: 'secure', reason: null };
const INSECURE: DnssecView = {
  status: 'insecure',
  reason: { code: 'no_ds', zone: 'dane.test', detail: 'dane.test is delegated from test without DS' },
};
const BOGUS: DnssecView = {
  status: 'bogus',
  reason: {
    code: 'signature_expired',
    zone: 'dane.test',
    detail: 'the DNSKEY RRset of dane.test is not signed by a key its DS names: the signature expired',
  },
};

function evaluate(
  records: TlsaRecord[] | DnsOutcome<TlsaRecord>,
  chain: IssuedCert[] | Buffer[] | undefined,
  dnssec: DnssecView = SECURE,
) {
  const input: DaneInput = {
    host: HOST,
    tlsa: Array.isArray(records) ? answer(records) : records,
    dnssec,
    chain: chain?.map((c) => (Buffer.isBuffer(c) ? c : der(c.certPem))),
    now: new Date(),
  };
  return evaluateDane(input);
}

const messages = (r: { findings: { severity: string; message: string; rfc: string }[] }) =>
  r.findings.map((f) => `${f.severity}: ${f.message} (${f.rfc})`);

/** `openssl x509 -pubkey | openssl pkey -pubin -outform DER | openssl dgst -<alg>`: the usual recipe for a 3 1 x record. */
function opensslSpkiDigest(pem: string, alg: 'sha256' | 'sha512'): string {
  const pubkey = execFileSync('openssl', ['x509', '-noout', '-pubkey'], { input: pem });
  const spkiDer = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'DER'], { input: pubkey });
  return digestWithOpenssl(spkiDer, alg);
}

/** `openssl x509 -outform DER | openssl dgst -<alg>`: the recipe for a x 0 x record. */
function opensslCertDigest(pem: string, alg: 'sha256' | 'sha512'): string {
  return digestWithOpenssl(execFileSync('openssl', ['x509', '-outform', 'DER'], { input: pem }), alg);
}

function digestWithOpenssl(bytes: Buffer, alg: string): string {
  // -r prints "<hex> *stdin".
  const out = execFileSync('openssl', ['dgst', `-${alg}`, '-r'], { input: bytes }).toString();
  return out.split(' ')[0]!.toUpperCase();
}

let ca: TestPki;
let intermediate: TestIssuer;
/** Issued by the intermediate for HOST: the usual chain [leaf, intermediate]. */
let leaf: IssuedCert;
/** The same host after a rollover: a new key. */
let renewed: IssuedCert;
let otherHostLeaf: IssuedCert;
let expiredLeaf: IssuedCert;
/** A leaf for HOST from a CA that has nothing to do with the test PKI. */
let strangerLeaf: IssuedCert;

beforeAll(async () => {
  const pki = await getTestPki();
  ca = pki;
  intermediate = await pki.issueIntermediate({ commonName: 'DANE test intermediate' });
  leaf = await pki.issue({ dnsNames: [HOST], issuer: intermediate });
  renewed = await pki.issue({ dnsNames: [HOST], issuer: intermediate });
  otherHostLeaf = await pki.issue({ dnsNames: ['mx.elsewhere.test'], issuer: intermediate });
  expiredLeaf = await pki.issue({
    dnsNames: [HOST],
    issuer: intermediate,
    notAfter: new Date(Date.now() - DAY),
  });
  strangerLeaf = await (await createPki('DANE stranger CA')).issue({ dnsNames: [HOST] });
});

describe('DANE-EE(3)', () => {
  it('3 1 1: the SHA2-256 of the leaf key, as openssl computes it, is valid', () => {
    const digest = opensslSpkiDigest(leaf.certPem, 'sha256');
    expect(digest).toBe(sha256(spki(leaf.certPem)));
    const r = evaluate([tlsa(3, 1, 1, digest)], [leaf, intermediate]);
    expect(r).toMatchObject({ tlsa_name: TLSA_NAME, verdict: 'valid', validated: true, findings: [] });
    expect(r.records).toEqual([
      {
        usage: 3,
        selector: 1,
        matching_type: 1,
        data: digest,
        meaning: 'DANE-EE(3) SPKI(1) SHA2-256(1)',
        usable: true,
        result: 'match',
        matched: 0,
      },
    ]);
    expect(r.summary).toBe(
      `DANE authenticates ${HOST}: DANE-EE(3) SPKI(1) SHA2-256(1) at ${TLSA_NAME} matches the certificates it sent.`,
    );
  });

  it('3 0 1 (openssl digest of the certificate), 3 1 2, 3 1 0 (the key itself) and 3 0 0 each match the leaf', () => {
    const certDigest = opensslCertDigest(leaf.certPem, 'sha256');
    expect(certDigest).toBe(sha256(der(leaf.certPem)));
    expect(opensslSpkiDigest(leaf.certPem, 'sha512')).toBe(sha512(spki(leaf.certPem)));
    for (const record of [
      tlsa(3, 0, 1, certDigest),
      tlsa(3, 1, 2, sha512(spki(leaf.certPem))),
      tlsa(3, 1, 0, hex(spki(leaf.certPem))),
      tlsa(3, 0, 0, hex(der(leaf.certPem))),
      // Lower-case hex in the record is the same data.
      tlsa(3, 1, 1, sha256(spki(leaf.certPem)).toLowerCase()),
    ]) {
      const r = evaluate([record], [leaf, intermediate]);
      expect(r.verdict, `${record.usage} ${record.selector} ${record.matchingType}`).toBe('valid');
      expect(r.records[0]).toMatchObject({ result: 'match', matched: 0 });
    }
  });

  it('3 1 0 with an RSA key: the SPKI bytes from the certificate equal openssl pkey -outform DER', async () => {
    const rsa = await makeCert({ subject: `CN=${HOST}`, dnsNames: [HOST], key: 'rsa-2048' });
    const pubkey = execFileSync('openssl', ['x509', '-noout', '-pubkey'], { input: rsa.pem });
    const reference = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'DER'], { input: pubkey });
    expect(evaluate([tlsa(3, 1, 0, hex(reference))], [rsa.der]).verdict).toBe('valid');
  });

  it('neither the name nor the dates count for DANE-EE (RFC 7672 §3.1.1): an expired leaf for another host is valid', () => {
    for (const cert of [expiredLeaf, otherHostLeaf]) {
      expect(evaluate([tlsa(3, 1, 1, sha256(spki(cert.certPem)))], [cert, intermediate]).verdict).toBe(
        'valid',
      );
    }
  });

  it('rollover accident: the record still names the old key, the server sends the new one → mismatch', () => {
    const stale = sha256(spki(leaf.certPem));
    const r = evaluate([tlsa(3, 1, 1, stale)], [renewed, intermediate]);
    expect(r.verdict).toBe('mismatch');
    const subject = 'CN=mx.dane.test';
    expect(r.records[0]).toMatchObject({
      result: 'mismatch',
      matched: null,
      reason: `it matches neither the public key of certificate #0 (${subject}) nor any other certificate sent`,
    });
    expect(messages(r)).toEqual([
      `error: No usable TLSA record at ${TLSA_NAME} matches the certificates ${HOST} sent (3 1 1: ${r.records[0]!.reason}): DANE-aware senders refuse to deliver mail to ${HOST}, deferring it until it bounces. The usual cause is a certificate or key renewed without first publishing a TLSA record for the new one; publish records for the current key, and for the next one before each rollover. (RFC 7672 §3.1, §4)`,
    ]);
    expect(r.summary).toBe(
      `No usable TLSA record at ${TLSA_NAME} matches the certificates ${HOST} sent: DANE-aware senders do not deliver to it.`,
    );
  });

  it('rollover done right: the current and the next key published, either one served → valid, no finding', () => {
    const records = [tlsa(3, 1, 1, sha256(spki(leaf.certPem))), tlsa(3, 1, 1, sha256(spki(renewed.certPem)))];
    const before = evaluate(records, [leaf, intermediate]);
    const after = evaluate(records, [renewed, intermediate]);
    expect([before.verdict, after.verdict]).toEqual(['valid', 'valid']);
    expect(after.records.map((c) => c.result)).toEqual(['mismatch', 'match']);
    expect(after.findings).toEqual([]);
  });

  it('a DANE-EE record for the intermediate says which usage was meant', () => {
    const r = evaluate([tlsa(3, 0, 1, sha256(der(intermediate.certPem)))], [leaf, intermediate]);
    expect(r.verdict).toBe('mismatch');
    expect(r.records[0]!.reason).toBe(
      `it matches certificate #1 (${INTERMEDIATE}), not the server's own certificate: for an issuing CA the usage is DANE-TA(2)`,
    );
  });
});

describe('DANE-TA(2)', () => {
  it('2 0 1 on the intermediate, the leaf chaining to it and naming the host → valid, matched #1', () => {
    const digest = opensslCertDigest(intermediate.certPem, 'sha256');
    const r = evaluate([tlsa(2, 0, 1, digest)], [leaf, intermediate]);
    expect(r).toMatchObject({ verdict: 'valid', findings: [] });
    expect(r.records[0]).toMatchObject({
      meaning: 'DANE-TA(2) Cert(0) SHA2-256(1)',
      result: 'match',
      matched: 1,
    });
    // By key too, and whatever the order the certificates come in (RFC 8446 §4.4.2).
    const unrelated = der(strangerLeaf.certPem);
    const r2 = evaluate(
      [tlsa(2, 1, 1, sha256(spki(intermediate.certPem)))],
      [der(leaf.certPem), unrelated, der(intermediate.certPem)],
    );
    expect(r2.verdict).toBe('valid');
    expect(r2.records[0]).toMatchObject({ result: 'match', matched: 2 });
  });

  it('the leaf names another host → mismatch: DANE-TA checks the name (RFC 7672 §3.2.2)', () => {
    const r = evaluate([tlsa(2, 0, 1, sha256(der(intermediate.certPem)))], [otherHostLeaf, intermediate]);
    expect(r.verdict).toBe('mismatch');
    expect(r.records[0]).toMatchObject({
      result: 'mismatch',
      // The TA matched; the failure is the name.
      matched: 1,
      reason: `certificate #1 (${INTERMEDIATE}) matches and the server's certificate chains up to it, but the server's certificate does not name ${HOST} (it names mx.elsewhere.test)`,
    });
  });

  it('the subject CN counts only when the certificate has no DNS name in its SAN (RFC 7672 §3.2.3); wildcards one label deep', async () => {
    const pki = ca;
    const record = [tlsa(2, 0, 1, sha256(der(intermediate.certPem)))];
    const cnOnly = await pki.issue({ commonName: HOST, issuer: intermediate });
    const sanElsewhere = await pki.issue({
      dnsNames: ['mx.elsewhere.test'],
      commonName: HOST,
      issuer: intermediate,
    });
    const wildcard = await pki.issue({ dnsNames: ['*.dane.test'], issuer: intermediate });
    const deepWildcard = await pki.issue({ dnsNames: ['*.test'], issuer: intermediate });
    expect(
      [cnOnly, sanElsewhere, wildcard, deepWildcard].map((c) => evaluate(record, [c, intermediate]).verdict),
    ).toEqual(['valid', 'mismatch', 'valid', 'mismatch']);
  });

  it('an expired leaf → mismatch: DANE-TA checks the dates of the chain (RFC 7672 §3.1.2)', () => {
    const r = evaluate([tlsa(2, 1, 1, sha256(spki(intermediate.certPem)))], [expiredLeaf, intermediate]);
    expect(r.verdict).toBe('mismatch');
    expect(r.records[0]!.reason).toMatch(/but certificate #0 \(CN=mx\.dane\.test\) expired on \d{4}-/);
  });

  it('a leaf from another CA does not chain up to the matching intermediate → mismatch', () => {
    const r = evaluate([tlsa(2, 0, 1, sha256(der(intermediate.certPem)))], [strangerLeaf, intermediate]);
    expect(r.records[0]).toMatchObject({
      result: 'mismatch',
      matched: 1,
      reason: `certificate #1 (${INTERMEDIATE}) matches, but the server's certificate does not chain up to it (no path of verified signatures through the certificates sent)`,
    });
  });

  it('a record for the root: valid when the server sends the root, mismatch when only the trust store has it (RFC 7672 §3.2.1)', () => {
    const record = [tlsa(2, 0, 1, sha256(der(ca.caPem)))];
    const sent = evaluate(record, [der(leaf.certPem), der(intermediate.certPem), der(ca.caPem)]);
    expect(sent.verdict).toBe('valid');
    expect(sent.records[0]).toMatchObject({ matched: 2 });
    const omitted = evaluate(record, [leaf, intermediate]);
    expect(omitted.verdict).toBe('mismatch');
    expect(omitted.records[0]!.reason).toMatch(
      /^no certificate the server sent matches it \(certificate #0 \(CN=mx\.dane\.test\), certificate #1 \(.*\)\); the trust anchor must be in the chain the server sends, even a self-signed root$/,
    );
  });

  it('the TA whole in the record (2 1 0 key, 2 0 0 certificate) works without the server sending it (RFC 7671 §5.2.2)', () => {
    for (const record of [
      tlsa(2, 1, 0, hex(spki(intermediate.certPem))),
      tlsa(2, 0, 0, hex(der(intermediate.certPem))),
    ]) {
      const r = evaluate([record], [leaf]);
      expect(r.verdict).toBe('valid');
      expect(r.records[0]).toMatchObject({ result: 'match', matched: null, issued_by_record: 0 });
    }
    // The same key as a digest cannot be checked without the certificate.
    expect(evaluate([tlsa(2, 1, 1, sha256(spki(intermediate.certPem)))], [leaf]).verdict).toBe('mismatch');
    // A whole key that signed nothing sent.
    const foreignKey = evaluate([tlsa(2, 1, 0, hex(spki(ca.caPem)))], [leaf]);
    expect(foreignKey.records[0]!.reason).toBe(
      "no certificate the server sent matches it (certificate #0 (CN=mx.dane.test)), and the public key it holds issued none that the server's certificate chains up to",
    );
  });

  it('a DANE-TA record for the leaf itself says DANE-EE(3) was meant', () => {
    const r = evaluate([tlsa(2, 1, 1, sha256(spki(leaf.certPem)))], [leaf, intermediate]);
    expect(r.verdict).toBe('mismatch');
    expect(r.records[0]!.reason).toBe(
      "it matches the server's own certificate (#0); DANE-TA(2) names an issuing CA, a record for the server's own certificate or key needs usage DANE-EE(3)",
    );
  });

  it('an issuer that is not a CA cannot be a link of the chain', async () => {
    const root = await makeCert({ subject: 'CN=Unit DANE Root', ca: true });
    const notCa = await makeCert({ subject: 'CN=not a CA', dnsNames: ['other.test'], issuer: root });
    const below = await makeCert({ subject: `CN=${HOST}`, dnsNames: [HOST], issuer: notCa });
    const r = evaluate([tlsa(2, 0, 1, sha256(root.der))], [below.der, notCa.der, root.der]);
    expect(r.verdict).toBe('mismatch');
    expect(r.records[0]!.reason).toContain(
      'certificate #1 (CN=not a CA) is not a CA certificate (basicConstraints)',
    );
  });
});

describe('records SMTP cannot use, and answers without usable records', () => {
  it('PKIX usages 0 and 1 only → unusable, even when they would match', () => {
    const r = evaluate(
      [tlsa(0, 0, 1, sha256(der(intermediate.certPem))), tlsa(1, 1, 1, sha256(spki(leaf.certPem)))],
      [leaf, intermediate],
    );
    expect(r.verdict).toBe('unusable');
    expect(r.records.map((c) => [c.meaning, c.result, c.matched])).toEqual([
      ['PKIX-TA(0) Cert(0) SHA2-256(1)', 'unusable', null],
      ['PKIX-EE(1) SPKI(1) SHA2-256(1)', 'unusable', null],
    ]);
    expect(messages(r)).toEqual([
      `warning: No TLSA record at ${TLSA_NAME} is usable for SMTP (0 0 1: SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages; 1 1 1: SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages): DANE-aware senders then require TLS but authenticate nothing. Publish DANE-EE(3) or DANE-TA(2) records. (RFC 7672 §3.1)`,
    ]);
    expect(r.summary).toBe(
      `The TLSA records at ${TLSA_NAME} are validated but none is usable for SMTP: senders require TLS with ${HOST} and authenticate nothing.`,
    );
  });

  it('an unassigned matching type or a digest of the wrong length → unusable', () => {
    const digest = sha256(spki(leaf.certPem));
    const r = evaluate([tlsa(3, 1, 3, digest), tlsa(3, 1, 2, digest), tlsa(3, 2, 1, digest)], [leaf]);
    expect(r.verdict).toBe('unusable');
    expect(r.records.map((c) => c.problem)).toEqual([
      'matching type 3 is unassigned',
      'a SHA2-512 digest has 128 hex digits, this one 64',
      'selector 2 is unassigned',
    ]);
  });

  it('an unusable record beside a matching usable one → valid, the unusable one noted', () => {
    const r = evaluate(
      [tlsa(1, 1, 1, sha256(spki(leaf.certPem))), tlsa(3, 1, 1, sha256(spki(leaf.certPem)))],
      [leaf, intermediate],
    );
    expect(r.verdict).toBe('valid');
    expect(r.records.map((c) => c.result)).toEqual(['unusable', 'match']);
    expect(messages(r)).toEqual([
      `info: 1 of 2 TLSA records at ${TLSA_NAME} are not usable for SMTP and are ignored (1 1 1: SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages). (RFC 7672 §3.1)`,
    ]);
  });

  it('records in an unsigned zone (netdiag: insecure) → insecure, saying whether they would match once the zone is signed', () => {
    const good = evaluate([tlsa(3, 1, 1, sha256(spki(leaf.certPem)))], [leaf], INSECURE);
    expect(good).toMatchObject({ verdict: 'insecure', validated: false, dnssec: INSECURE });
    expect(good.records[0]).toMatchObject({ result: 'match', matched: 0 });
    expect(messages(good)).toEqual([
      `warning: TLSA records at ${TLSA_NAME} are published in a zone that is not DNSSEC-signed (the chain of trust ends at dane.test): senders ignore them, so DANE does not protect ${HOST}. They match the certificates the server sent: signing the zone (with a DS record at its parent) would make DANE effective. (RFC 7672 §2.2.3)`,
    ]);
    const stale = evaluate([tlsa(3, 1, 1, sha256(spki(leaf.certPem)))], [renewed], INSECURE);
    expect(stale.verdict).toBe('insecure');
    expect(stale.findings[0]!.message).toContain(
      'They do not match the certificates the server sent either: correct them before signing the zone',
    );
    const unchecked = evaluate([tlsa(3, 1, 1, sha256(spki(leaf.certPem)))], undefined, INSECURE);
    expect(unchecked.findings[0]!.message).toMatch(/protect mx\.dane\.test\.$/);
    expect(unchecked.summary).toBe(
      `The TLSA records at ${TLSA_NAME} are in a zone that is not DNSSEC-signed: senders ignore them.`,
    );
  });

  it('a TLSA answer that fails validation (bogus) → a DANE failure naming the broken link, records or not', () => {
    const matching = [tlsa(3, 1, 1, sha256(spki(leaf.certPem)))];
    const withRecords = evaluate(matching, [leaf], BOGUS);
    expect(withRecords).toMatchObject({ verdict: 'bogus', validated: false, dnssec: BOGUS });
    // Compared all the same: repairing the chain is all that is missing.
    expect(withRecords.records[0]).toMatchObject({ result: 'match' });
    expect(messages(withRecords)).toEqual([
      `error: DNSSEC bogus: the TLSA answer at ${TLSA_NAME} fails netdiag's validation at dane.test (signature_expired: the DNSKEY RRset of dane.test is not signed by a key its DS names: the signature expired). Validating resolvers answer SERVFAIL for it, and DANE-aware senders defer mail to ${HOST} until the chain is repaired, then bounce it. They match the certificates the server sent: repairing the chain would make DANE effective. (RFC 7672 §2.2)`,
    ]);
    expect(withRecords.summary).toBe(
      `DNSSEC bogus: the TLSA answer at ${TLSA_NAME} fails validation at dane.test (signature_expired): DANE-aware senders defer mail to ${HOST}.`,
    );
    // The resolvers refused it (SERVFAIL) and nothing could be read: still bogus, not a lookup error.
    const refused = evaluate({ kind: 'error', message: 'upstream_error: SERVFAIL' }, [leaf], BOGUS);
    expect(refused).toMatchObject({ verdict: 'bogus', validated: false, records: [] });
  });

  it('no DNSSEC verdict (indeterminate) → indeterminate: a warning, or a note when this instance does not validate', () => {
    const records = [tlsa(3, 1, 1, sha256(spki(leaf.certPem)))];
    const failed = evaluate(records, [renewed], {
      status: 'indeterminate',
      reason: { code: 'servers_unreachable', zone: 'dane.test', detail: 'no server of dane.test answered' },
    });
    expect(failed).toMatchObject({ verdict: 'indeterminate', validated: null });
    expect(messages(failed)).toEqual([
      `warning: The TLSA records at ${TLSA_NAME} could not be DNSSEC-validated (no server of dane.test answered), so whether DANE-aware senders apply them is not known. They do not match the certificates the server sent: correct them, or DANE-aware senders may stop delivering. (RFC 7672 §2.2.3)`,
    ]);
    const off = evaluate(records, [leaf], {
      status: 'indeterminate',
      reason: { code: 'validator_unavailable', zone: '.', detail: 'netdiag does not validate DNSSEC here' },
    });
    expect(off.findings.map((f) => f.severity)).toEqual(['info']);
  });

  it('NXDOMAIN, an empty answer and a name that cannot be asked → none', () => {
    const outcomes: [DnsOutcome<TlsaRecord>, DnssecView][] = [
      [{ kind: 'answer', rcode: 'NXDOMAIN', records: [], aliases: [] }, SECURE],
      [answer([]), INSECURE],
      [{ kind: 'invalid_name', message: 'name too long' }, INSECURE],
    ];
    expect(outcomes.map(([o, dnssec]) => evaluate(o, [leaf], dnssec))).toEqual([
      {
        tlsa_name: TLSA_NAME,
        verdict: 'none',
        validated: true,
        dnssec: SECURE,
        records: [],
        summary: `No TLSA records at ${TLSA_NAME}: DANE does not apply to ${HOST}.`,
        findings: [],
      },
      expect.objectContaining({ verdict: 'none', validated: false }),
      expect.objectContaining({ verdict: 'none', validated: null }),
    ]);
  });

  it('a failed lookup → error: DANE-aware senders defer mail (RFC 7672 §2.2.3)', () => {
    const r = evaluate({ kind: 'error', message: 'SERVFAIL from every resolver' }, [leaf]);
    expect(r).toMatchObject({ verdict: 'error', validated: null, records: [] });
    expect(messages(r)).toEqual([
      `warning: The TLSA lookup for ${TLSA_NAME} failed (SERVFAIL from every resolver): DANE-aware senders whose MX and address answers for ${HOST} validated defer mail to it while the lookup fails. (RFC 7672 §2.2.3)`,
    ]);
  });

  it('validated usable records but no handshake (STARTTLS failed) → unchecked, said plainly', () => {
    const r = evaluate(
      [tlsa(3, 1, 1, sha256(spki(leaf.certPem))), tlsa(0, 0, 1, 'AB'.repeat(32))],
      undefined,
    );
    expect(r.verdict).toBe('unchecked');
    expect(r.records.map((c) => [c.result, c.matched])).toEqual([
      ['unchecked', null],
      ['unusable', null],
    ]);
    expect(messages(r)).toContain(
      `info: The TLSA records at ${TLSA_NAME} are validated and usable, but no TLS handshake with ${HOST} completed, so they were not checked against its certificates. With usable TLSA records DANE-aware senders require TLS with ${HOST} and never fall back to cleartext. (RFC 7672 §2.2)`,
    );
    // Only unusable records: nothing to check, the verdict is theirs.
    expect(evaluate([tlsa(1, 1, 1, 'AB'.repeat(32))], undefined).verdict).toBe('unusable');
  });

  it('bytes that are not a certificate: matched byte for byte by Cert(0) Full(0), otherwise a mismatch, never a throw', () => {
    const garbage = Buffer.from('not a certificate');
    expect(evaluate([tlsa(3, 0, 0, hex(garbage))], [garbage]).verdict).toBe('valid');
    const r = evaluate(
      [tlsa(3, 1, 1, sha256(spki(leaf.certPem))), tlsa(2, 0, 1, sha256(der(intermediate.certPem)))],
      [garbage, der(intermediate.certPem)],
    );
    expect(r.verdict).toBe('mismatch');
    expect(r.records.map((c) => c.reason)).toEqual([
      "the server's certificate could not be parsed, so its public key could not be compared",
      `certificate #1 (${INTERMEDIATE}) matches, but the server's certificate does not chain up to it (no path of verified signatures through the certificates sent)`,
    ]);
  });
});
